//! The local problem `u = W r + q` over many constraint points, with `W` stored by 3×3
//! blocks (docs/theory/contact.md, eq. (C4)), and the two error measures of §5.

use nalgebra::{Matrix3, Vector3};
use rayon::prelude::*;

use crate::law::Law;
use crate::local::natural_residual;

/// Why a problem or a solve was refused or failed.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ProblemError {
    /// Sizes that do not agree.
    #[error("the problem's sizes do not agree: {0}")]
    Sizes(String),
    /// A block index out of range.
    #[error("a block ({row}, {col}) lies outside the {points} points of the problem")]
    BlockIndex {
        /// Block row.
        row: usize,
        /// Block column.
        col: usize,
        /// Number of points.
        points: usize,
    },
    /// A value that is not a finite number.
    #[error("{what} of point {point} is not a finite number")]
    NotFinite {
        /// Which data.
        what: &'static str,
        /// Which point.
        point: usize,
    },
    /// A negative friction coefficient.
    #[error("point {point}: friction coefficient {mu} is negative")]
    Friction {
        /// Which point.
        point: usize,
        /// The value.
        mu: f64,
    },
    /// A diagonal block with a non-positive normal entry: the point cannot be moved along its
    /// normal by its own impulse.
    #[error("point {point}: the diagonal entry W_NN = {value:e} is not positive")]
    DiagonalNotPositive {
        /// Which point.
        point: usize,
        /// The value.
        value: f64,
    },
}

/// The local problem `u = W r + q` with a law per point.
#[derive(Clone, Debug)]
pub struct Problem {
    laws: Vec<Law>,
    q: Vec<Vector3<f64>>,
    diag: Vec<Matrix3<f64>>,
    row_start: Vec<usize>,
    cols: Vec<usize>,
    blocks: Vec<Matrix3<f64>>,
    norm_q: f64,
}

impl Problem {
    /// A problem from its laws, `q`, and the blocks of `W` as `(row, col, block)` triplets
    /// (any order; repeated positions are summed, in the order given).
    pub fn from_blocks(
        laws: Vec<Law>,
        q: Vec<Vector3<f64>>,
        triplets: Vec<(usize, usize, Matrix3<f64>)>,
    ) -> Result<Self, ProblemError> {
        let n = laws.len();
        if q.len() != n {
            return Err(ProblemError::Sizes(format!(
                "{n} laws but {} vectors q",
                q.len()
            )));
        }
        for &(i, j, _) in &triplets {
            if i >= n || j >= n {
                return Err(ProblemError::BlockIndex {
                    row: i,
                    col: j,
                    points: n,
                });
            }
        }
        let mut order: Vec<usize> = (0..triplets.len()).collect();
        order.sort_by_key(|&k| (triplets[k].0, triplets[k].1, k));
        let mut diag = vec![Matrix3::zeros(); n];
        let mut row_start = vec![0usize; n + 1];
        let mut cols = Vec::new();
        let mut blocks: Vec<Matrix3<f64>> = Vec::new();
        let mut last: Option<(usize, usize)> = None;
        for &k in &order {
            let (i, j, b) = triplets[k];
            if i == j {
                diag[i] += b;
                continue;
            }
            if last == Some((i, j)) {
                *blocks.last_mut().expect("a block was pushed") += b;
            } else {
                cols.push(j);
                blocks.push(b);
                row_start[i + 1] += 1;
                last = Some((i, j));
            }
        }
        for i in 0..n {
            row_start[i + 1] += row_start[i];
        }
        let problem = Self {
            norm_q: q.iter().map(|v| v.norm_squared()).sum::<f64>().sqrt(),
            laws,
            q,
            diag,
            row_start,
            cols,
            blocks,
        };
        problem.check()?;
        Ok(problem)
    }

    fn check(&self) -> Result<(), ProblemError> {
        for (i, law) in self.laws.iter().enumerate() {
            if !self.q[i].iter().all(|v| v.is_finite()) {
                return Err(ProblemError::NotFinite {
                    what: "q",
                    point: i,
                });
            }
            if !self.diag[i].iter().all(|v| v.is_finite())
                || !self
                    .row_blocks(i)
                    .all(|(_, b)| b.iter().all(|v| v.is_finite()))
            {
                return Err(ProblemError::NotFinite {
                    what: "a block of W",
                    point: i,
                });
            }
            let mu = law.friction();
            if !(mu >= 0.0 && mu.is_finite()) {
                return Err(ProblemError::Friction { point: i, mu });
            }
            if self.diag[i][(0, 0)].partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) {
                return Err(ProblemError::DiagonalNotPositive {
                    point: i,
                    value: self.diag[i][(0, 0)],
                });
            }
        }
        Ok(())
    }

    /// Adds `shift` to the normal entry of `q` at point `i` (the caller's law: a position-level
    /// Signorini condition `g(t+h) ≥ 0` enters as `q_N += 2 g/h` whatever the sign of the
    /// mid-step gap `g`, which the assembly's `gap_rate` takes for positive gaps only).
    ///
    /// # Panics
    /// If `i` is not a point of the problem.
    pub fn shift_normal(&mut self, i: usize, shift: f64) {
        self.shift_normals([(i, shift)]);
    }

    /// [`Self::shift_normal`] of several points at once, `‖q‖` recomputed once (one shift at
    /// a time costs `O(n)` each: `O(n²)` for a solid's every contact node).
    ///
    /// # Panics
    /// If a point is not one of the problem's.
    pub fn shift_normals(&mut self, shifts: impl IntoIterator<Item = (usize, f64)>) {
        let mut shifted = false;
        for (i, shift) in shifts {
            self.q[i].x += shift;
            shifted = true;
        }
        if shifted {
            self.norm_q = self.q.iter().map(|v| v.norm_squared()).sum::<f64>().sqrt();
        }
    }

    /// Number of points.
    pub fn len(&self) -> usize {
        self.laws.len()
    }

    /// Whether there is no point.
    pub fn is_empty(&self) -> bool {
        self.laws.is_empty()
    }

    /// The laws.
    pub fn laws(&self) -> &[Law] {
        &self.laws
    }

    /// `q`, a 3-vector per point.
    pub fn q(&self) -> &[Vector3<f64>] {
        &self.q
    }

    /// `‖q‖` (Euclidean, over all rows).
    pub fn norm_q(&self) -> f64 {
        self.norm_q
    }

    /// The diagonal block `W_ii`.
    pub fn diagonal(&self, i: usize) -> &Matrix3<f64> {
        &self.diag[i]
    }

    /// The off-diagonal blocks of row `i`: `(j, W_ij)`, by increasing `j`.
    pub fn row_blocks(&self, i: usize) -> impl Iterator<Item = (usize, &Matrix3<f64>)> {
        let range = self.row_start[i]..self.row_start[i + 1];
        self.cols[range.clone()]
            .iter()
            .copied()
            .zip(self.blocks[range].iter())
    }

    /// Number of stored off-diagonal blocks.
    pub fn off_diagonal_blocks(&self) -> usize {
        self.blocks.len()
    }

    /// `q_i + Σ_{j≠i} W_ij r_j`: what point `i` sees of the others.
    #[inline]
    pub fn local_q(&self, i: usize, r: &[Vector3<f64>]) -> Vector3<f64> {
        let mut v = self.q[i];
        for k in self.row_start[i]..self.row_start[i + 1] {
            v += self.blocks[k] * r[self.cols[k]];
        }
        v
    }

    /// `u = W r + q` (rows in parallel, each summed in a fixed order: the same bits on any
    /// number of threads).
    pub fn velocity(&self, r: &[Vector3<f64>], u: &mut [Vector3<f64>]) {
        u.par_iter_mut()
            .enumerate()
            .with_min_len(256)
            .for_each(|(i, ui)| *ui = self.local_q(i, r) + self.diag[i] * r[i]);
    }

    /// The residual vector of point `i` (C10 for a contact; the constrained velocity
    /// components for a bilateral point).
    pub fn point_residual(&self, i: usize, r: &Vector3<f64>, u: &Vector3<f64>) -> Vector3<f64> {
        match self.laws[i] {
            Law::Contact { friction, .. } => natural_residual(r, u, friction),
            Law::FixedPoint => *u,
            Law::FixedDirection | Law::RigidLink => Vector3::new(u[0], r[1], r[2]),
        }
    }

    /// Siconos' error relative to `‖q‖` (C11), the solver's stopping test:
    /// `sqrt(Σ_i ‖r_i − P_K(r_i − u_i − μ‖u_{T,i}‖e_N)‖²) / ‖q‖` (not divided when
    /// `‖q‖ ≤ ε_machine`), with `u = W r + q` computed here. It is never below
    /// [`Problem::siconos_error_with`], so a problem solved to `τ` by this measure is solved to
    /// `τ` by Siconos 4.4's.
    pub fn fc3d_error(&self, r: &[Vector3<f64>]) -> f64 {
        let mut u = vec![Vector3::zeros(); self.len()];
        self.velocity(r, &mut u);
        self.fc3d_error_with(r, &u)
    }

    /// The absolute residual `sqrt(Σ_i ‖P_i‖²)` of (C10)–(C11).
    pub fn absolute_residual(&self, r: &[Vector3<f64>], u: &[Vector3<f64>]) -> f64 {
        (0..self.len())
            .map(|i| self.point_residual(i, &r[i], &u[i]).norm_squared())
            .sum::<f64>()
            .sqrt()
    }

    /// [`Problem::fc3d_error`] with `u = W r + q` given.
    pub fn fc3d_error_with(&self, r: &[Vector3<f64>], u: &[Vector3<f64>]) -> f64 {
        let e = self.absolute_residual(r, u);
        if self.norm_q > f64::EPSILON {
            e / self.norm_q
        } else {
            e
        }
    }

    /// The same residual as Siconos 4.4's `fc3d_compute_error` scales it (C11'):
    /// divided by `max(‖q‖, ‖r‖, ‖u‖)` (not divided when that is at most ε_machine).
    pub fn siconos_error_with(&self, r: &[Vector3<f64>], u: &[Vector3<f64>]) -> f64 {
        let norm = |v: &[Vector3<f64>]| v.iter().map(|x| x.norm_squared()).sum::<f64>().sqrt();
        let scale = self.norm_q.max(norm(r)).max(norm(u));
        let e = self.absolute_residual(r, u);
        if scale > f64::EPSILON { e / scale } else { e }
    }

    /// Solfec's energy ratio (C12): `Σ_i ½ P_iᵀ W_ii⁻¹ P_i / Σ_i ½ q_iᵀ W_ii⁻¹ q_i`, the
    /// spurious energy of the velocity residuals `P_i` (C10) against the energy of the free
    /// local velocities, each point measured by its own diagonal block (1 when the
    /// denominator vanishes).
    pub fn energy_ratio_with(&self, r: &[Vector3<f64>], u: &[Vector3<f64>]) -> f64 {
        let mut top = 0.0;
        let mut bottom = 0.0;
        for i in 0..self.len() {
            let p = self.point_residual(i, &r[i], &u[i]);
            let w = &self.diag[i];
            match self.laws[i].rows() {
                1 => {
                    top += 0.5 * p[0] * p[0] / w[(0, 0)];
                    bottom += 0.5 * self.q[i][0] * self.q[i][0] / w[(0, 0)];
                }
                _ => {
                    // The quadratic form of the symmetric part (a block read from data need not
                    // be exactly symmetric).
                    let sym = 0.5 * (w + w.transpose());
                    let (a, b) = match sym.cholesky() {
                        Some(c) => (p.dot(&c.solve(&p)), self.q[i].dot(&c.solve(&self.q[i]))),
                        None => (
                            p.norm_squared() / w[(0, 0)],
                            self.q[i].norm_squared() / w[(0, 0)],
                        ),
                    };
                    top += 0.5 * a;
                    bottom += 0.5 * b;
                }
            }
        }
        if bottom > 0.0 { top / bottom } else { top }
    }

    /// The same points with `Wᵀ` in place of `W` (blocks `W_ji ᵀ`), same `q` and laws.
    pub fn transposed(&self) -> Self {
        let mut triplets: Vec<(usize, usize, Matrix3<f64>)> = (0..self.len())
            .map(|i| (i, i, self.diag[i].transpose()))
            .collect();
        for i in 0..self.len() {
            for (j, b) in self.row_blocks(i) {
                triplets.push((j, i, b.transpose()));
            }
        }
        Self::from_blocks(self.laws.clone(), self.q.clone(), triplets)
            .expect("the transpose of a valid problem is valid")
    }

    /// Whether `W` is exactly symmetric.
    pub fn is_symmetric(&self) -> bool {
        (0..self.len()).all(|i| {
            self.diag[i] == self.diag[i].transpose()
                && self.row_blocks(i).all(|(j, b)| {
                    self.row_blocks(j)
                        .find(|&(c, _)| c == i)
                        .is_some_and(|(_, bt)| *bt == b.transpose())
                })
        })
    }

    /// The dense `W` (3n × 3n, row-major), for tests and small problems.
    pub fn dense_w(&self) -> Vec<f64> {
        let n = 3 * self.len();
        let mut w = vec![0.0; n * n];
        for i in 0..self.len() {
            let mut put = |j: usize, b: &Matrix3<f64>| {
                for a in 0..3 {
                    for c in 0..3 {
                        w[(3 * i + a) * n + 3 * j + c] += b[(a, c)];
                    }
                }
            };
            put(i, &self.diag[i]);
            for (j, b) in self.row_blocks(i) {
                put(j, b);
            }
        }
        w
    }
}
