//! The interface a body offers to the contact layer, the constraint points between bodies,
//! and the assembly of the local problem from them (docs/theory/contact.md, §3).
//!
//! A body (rigid, a solid, …) keeps its own stepper. For one step it offers:
//!
//! - its *free velocity* `u_free` (the velocity at the end of the step without contact
//!   impulses) and its velocity at the start of the step `u⁻` (for restitution);
//! - the map `H` from its velocity to the velocity of a point (a world 3-vector per dof it
//!   touches: `v_point = Σ_d h_d u_d`);
//! - the action of its inverse "inertia" on such a map, `A⁻¹Hᵀ` (a world 3-vector per dof:
//!   row `d` of the dofs × 3 matrix), so that `W_ij = H_i A⁻¹ H_jᵀ` are 3×3 blocks;
//! - and it takes back its total generalized impulse `p = Σ Hᵀ R` and ends the step with
//!   `u = u_free + A⁻¹ p` (C5).
//!
//! `A` is the matrix the body's scheme inverts: the mass for DEF_EXP and for the linear
//! motion of a rigid body, `M + (ηh/2 + h²/4) K` for DEF_LIM, the inertia operator of the
//! rotation schemes (Solfec's "generalized inverse inertia").

use nalgebra::{Matrix3, Vector3};
use rayon::prelude::*;

use crate::law::Law;
use crate::problem::{Problem, ProblemError};

/// A sparse map over a body's dofs: `(dof, world 3-vector)` pairs, by increasing dof.
pub type PointMap = Vec<(usize, Vector3<f64>)>;

/// What a body offers to the contact layer for one step (see the module's documentation).
///
/// ```
/// use fem_contact::body::{ContactBody, PointMap};
/// use nalgebra::Vector3;
///
/// /// A particle: 3 dofs, the velocity of its only point is its velocity.
/// struct Particle { mass: f64, free: [f64; 3], start: [f64; 3], velocity: [f64; 3] }
///
/// impl ContactBody for Particle {
///     fn dof_count(&self) -> usize { 3 }
///     fn free_velocity(&self) -> &[f64] { &self.free }
///     fn start_velocity(&self) -> &[f64] { &self.start }
///     fn point_map(&self, _point: &Vector3<f64>, out: &mut PointMap) {
///         out.extend((0..3).map(|d| (d, Vector3::ith(d, 1.0))));
///     }
///     fn inverse_inertia_map(&self, h: &PointMap, out: &mut PointMap) {
///         out.extend(h.iter().map(|&(d, v)| (d, v / self.mass)));
///     }
///     fn apply_impulse(&mut self, p: &[f64]) {
///         for d in 0..3 { self.velocity[d] = self.free[d] + p[d] / self.mass; }
///     }
/// }
/// # let _ = Particle { mass: 1.0, free: [0.0; 3], start: [0.0; 3], velocity: [0.0; 3] };
/// ```
pub trait ContactBody: Sync {
    /// Number of velocity dofs.
    fn dof_count(&self) -> usize;
    /// `u_free`: the step's end velocity without contact impulses (`dof_count` values).
    fn free_velocity(&self) -> &[f64];
    /// `u⁻`: the velocity at the start of the step (`dof_count` values).
    fn start_velocity(&self) -> &[f64];
    /// Appends `H` of a world point (a material point of the body at the configuration
    /// detection ran at) to `out`, by increasing dof.
    fn point_map(&self, point: &Vector3<f64>, out: &mut PointMap);
    /// Appends `A⁻¹Hᵀ` for the map `h` to `out`, by increasing dof: entry `(d, g)` means
    /// `(A⁻¹Hᵀ)_{d,k} = g_k` for the world axes `k`.
    fn inverse_inertia_map(&self, h: &PointMap, out: &mut PointMap);
    /// Appends `A⁻¹H_iᵀ` for every map `hs[i]` to `out[i]` (`out.len() == hs.len()`), by
    /// increasing dof: all of a step's points of this body at once, so a body whose `A` is
    /// a factorization (DEF_LIM) can solve their columns in blocks. The assembly forms only
    /// `W_ij = H_i A⁻¹H_jᵀ` of these maps, so a body may leave out the rows of `A⁻¹H_iᵀ` at
    /// the dofs that no map of `hs` touches (a dense `A⁻¹Hᵀ` then costs `O(n_points²)`, not
    /// `O(n_points · dof_count)`); every row it gives must be the one
    /// [`inverse_inertia_map`](Self::inverse_inertia_map) gives.
    ///
    /// The default calls [`inverse_inertia_map`](Self::inverse_inertia_map) map by map
    /// (over the rayon pool).
    fn inverse_inertia_maps(&self, hs: &[PointMap], out: &mut [PointMap]) {
        debug_assert_eq!(hs.len(), out.len());
        hs.par_iter()
            .zip(out.par_iter_mut())
            .with_min_len(64)
            .for_each(|(h, g)| self.inverse_inertia_map(h, g));
    }
    /// Ends the step: `u = u_free + A⁻¹ p` for the generalized impulse `p` (`dof_count`).
    fn apply_impulse(&mut self, p: &[f64]);
}

/// One constraint point between a body and another body or the fixed world.
///
/// The frame's rows are `n, t1, t2` (world); `n` points from the second side into the
/// first. The relative velocity is `U = v_first(point) − v_second(point_second)` (C1), and
/// the impulse `R` (local) acts as `+Fᵀ R` on the first side and `−Fᵀ R` on the second.
#[derive(Clone, Debug, PartialEq)]
pub struct Constraint {
    /// Index of the first body.
    pub first: usize,
    /// Index of the second body, or `None` for the fixed world (a plane, a fixed shape, a
    /// fixed point).
    pub second: Option<usize>,
    /// The point on the first body (world).
    pub point: Vector3<f64>,
    /// The point on the second body (world); the same as `point` for a contact.
    pub point_second: Vector3<f64>,
    /// Rows `n, t1, t2`.
    pub frame: Matrix3<f64>,
    /// Contact gap (`> 0` apart, `< 0` overlapping) or, for a bilateral row, the violation
    /// of the constraint (the link's length error), at the detection configuration.
    pub gap: f64,
    /// The law of the point.
    pub law: Law,
}

/// Settings of the assembly.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct AssemblySettings {
    /// `q_N += gap_rate · g` for a contact with a positive gap `g` (a point that may close
    /// within the step: with detection at mid-step, `gap_rate = 2/h` allows exactly the
    /// approach that closes the gap by the step's end, eq. (C2b)); and `q_N += gap_rate · g`
    /// for a bilateral row's violation (drift correction). 0 switches both off.
    pub gap_rate: f64,
}

/// Why the assembly failed.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum AssemblyError {
    /// A constraint names a body that does not exist.
    #[error("constraint {constraint} names body {body}, but there are {bodies} bodies")]
    Body {
        /// The constraint.
        constraint: usize,
        /// The body.
        body: usize,
        /// Number of bodies.
        bodies: usize,
    },
    /// A constraint between a body and itself.
    #[error("constraint {0} joins a body to itself")]
    SelfContact(usize),
    /// A body's interface returned data of the wrong size.
    #[error("body {body}: {what}")]
    Interface {
        /// The body.
        body: usize,
        /// What is wrong.
        what: String,
    },
    /// The assembled problem is not valid.
    #[error(transparent)]
    Problem(#[from] ProblemError),
}

/// One side of a constraint: body, sign, `H`, `A⁻¹Hᵀ`.
#[derive(Clone, Debug)]
struct SideMaps {
    body: usize,
    sign: f64,
    h: PointMap,
    g: PointMap,
}

/// The local problem assembled from constraints and bodies, with what is needed to give
/// the impulses back.
#[derive(Clone, Debug)]
pub struct Assembly {
    /// The local problem `u = W r + q`.
    pub problem: Problem,
    sides: Vec<Vec<SideMaps>>,
    frames: Vec<Matrix3<f64>>,
    dof_counts: Vec<usize>,
}

fn dot_maps(a: &PointMap, b: &PointMap) -> Matrix3<f64> {
    // Σ_d a_d b_dᵀ over the dofs both maps touch (both sorted by dof), by increasing dof. A
    // point's `H` has a few entries and a dense `A⁻¹Hᵀ` (DEF_LIM, a rigid body) many: then
    // each of `a`'s dofs is looked up in `b` (galloping from the last one found) rather than
    // walking `b` — the same products summed in the same order.
    let mut m = Matrix3::zeros();
    if b.len() > 8 * a.len() {
        let mut from = 0;
        for &(d, va) in a {
            let rest = &b[from..];
            let k = rest.partition_point(|&(e, _)| e < d);
            from += k;
            match b.get(from) {
                Some(&(e, vb)) if e == d => {
                    m += va * vb.transpose();
                    from += 1;
                }
                Some(_) => {}
                None => break,
            }
        }
        return m;
    }
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        match a[i].0.cmp(&b[j].0) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                m += a[i].1 * b[j].1.transpose();
                i += 1;
                j += 1;
            }
        }
    }
    m
}

fn map_dot_velocity(h: &PointMap, u: &[f64]) -> Vector3<f64> {
    h.iter()
        .fold(Vector3::zeros(), |acc, &(d, v)| acc + v * u[d])
}

/// The blocks `W_ij = F_i (±H_i)(±A⁻¹H_jᵀ) F_jᵀ` one body gives (C4) for its constraint sides
/// `list` (constraint, side; in constraint order), row by row in that order and, in a row, by
/// column in that order, for the pairs whose `H_i` and `A⁻¹H_jᵀ` share a dof: the others are
/// zero and left out. A lumped mass (DEF_EXP, a particle) couples only the points of a node or
/// a face, so a body with `n` points gives `O(n)` blocks, not `n²`; a dense `A⁻¹Hᵀ` (DEF_LIM, a
/// rigid body) still pairs every point with every other.
fn body_blocks(
    list: &[(usize, usize)],
    per: &[(Vec<SideMaps>, Vector3<f64>)],
    frames: &[Matrix3<f64>],
) -> Vec<(usize, usize, Matrix3<f64>)> {
    // Which sides' A⁻¹Hᵀ touch each dof: positions in `list`, increasing, dof by dof
    // (`touching[start[d]..start[d + 1]]`; a counting sort: a dense A⁻¹Hᵀ gives
    // `list.len()` entries per dof).
    let sides = || {
        list.iter()
            .enumerate()
            .flat_map(|(k, &(c, s))| per[c].0[s].g.iter().map(move |&(d, _)| (d, k)))
    };
    let n_dofs = sides().map(|(d, _)| d + 1).max().unwrap_or(0);
    let mut start = vec![0usize; n_dofs + 1];
    for (d, _) in sides() {
        start[d + 1] += 1;
    }
    for d in 0..n_dofs {
        start[d + 1] += start[d];
    }
    let mut next = start.clone();
    let mut touching = vec![0usize; start[n_dofs]];
    for (d, k) in sides() {
        touching[next[d]] = k;
        next[d] += 1;
    }
    let mut seen = vec![usize::MAX; list.len()];
    let mut partners = Vec::new();
    let mut out = Vec::new();
    for (ka, &(ci, si)) in list.iter().enumerate() {
        let a = &per[ci].0[si];
        partners.clear();
        for &(d, _) in a.h.iter().filter(|&&(d, _)| d < n_dofs) {
            for &kb in &touching[start[d]..start[d + 1]] {
                if seen[kb] != ka {
                    seen[kb] = ka;
                    partners.push(kb);
                }
            }
        }
        partners.sort_unstable();
        for &kb in &partners {
            let (cj, sj) = list[kb];
            let b = &per[cj].0[sj];
            let world = dot_maps(&a.h, &b.g) * (a.sign * b.sign);
            out.push((ci, cj, frames[ci] * world * frames[cj].transpose()));
        }
    }
    out
}

/// Assembles `W` and `q` (C4, C2) for the constraints. Work is spread over the rayon pool
/// (per constraint, then per body) and gathered in a fixed order: the same bits on any
/// number of threads.
pub fn assemble(
    constraints: &[Constraint],
    bodies: &[&dyn ContactBody],
    settings: &AssemblySettings,
) -> Result<Assembly, AssemblyError> {
    let nb = bodies.len();
    for (c, k) in constraints.iter().enumerate() {
        for b in std::iter::once(k.first).chain(k.second) {
            if b >= nb {
                return Err(AssemblyError::Body {
                    constraint: c,
                    body: b,
                    bodies: nb,
                });
            }
        }
        if k.second == Some(k.first) {
            return Err(AssemblyError::SelfContact(c));
        }
    }
    for (b, body) in bodies.iter().enumerate() {
        let n = body.dof_count();
        if body.free_velocity().len() != n || body.start_velocity().len() != n {
            return Err(AssemblyError::Interface {
                body: b,
                what: format!("{n} dofs but velocities of other lengths"),
            });
        }
    }
    // Per constraint: `H` of each side, q; `A⁻¹Hᵀ` below, body by body.
    let mut per: Vec<(Vec<SideMaps>, Vector3<f64>)> = constraints
        .par_iter()
        .map(|k| {
            let mut sides = Vec::with_capacity(2);
            for (body, sign, point) in std::iter::once((k.first, 1.0, &k.point))
                .chain(k.second.map(|b| (b, -1.0, &k.point_second)))
            {
                let mut h = PointMap::new();
                bodies[body].point_map(point, &mut h);
                sides.push(SideMaps {
                    body,
                    sign,
                    h,
                    g: PointMap::new(),
                });
            }
            let mut free = Vector3::zeros();
            let mut start = Vector3::zeros();
            for s in &sides {
                free += s.sign * map_dot_velocity(&s.h, bodies[s.body].free_velocity());
                start += s.sign * map_dot_velocity(&s.h, bodies[s.body].start_velocity());
            }
            let mut q = k.frame * free;
            match k.law {
                Law::Contact { restitution, .. } => {
                    if k.gap > 0.0 {
                        q[0] += settings.gap_rate * k.gap;
                    } else {
                        q[0] += restitution * (k.frame.row(0) * start)[0].min(0.0);
                    }
                }
                _ => q[0] += settings.gap_rate * k.gap,
            }
            (sides, q)
        })
        .collect();
    // Constraints per body, in constraint order.
    let mut on_body: Vec<Vec<(usize, usize)>> = vec![Vec::new(); nb];
    for (c, (sides, _)) in per.iter().enumerate() {
        for (s, side) in sides.iter().enumerate() {
            on_body[side.body].push((c, s));
        }
    }
    // `A⁻¹Hᵀ` of all of a body's points at once (a block solve for DEF_LIM).
    let maps: Vec<Vec<PointMap>> = on_body
        .par_iter()
        .enumerate()
        .map(|(b, list)| {
            let hs: Vec<PointMap> = list.iter().map(|&(c, s)| per[c].0[s].h.clone()).collect();
            let mut gs = vec![PointMap::new(); hs.len()];
            if !hs.is_empty() {
                bodies[b].inverse_inertia_maps(&hs, &mut gs);
            }
            gs
        })
        .collect();
    for (list, gs) in on_body.iter().zip(maps) {
        for (&(c, s), g) in list.iter().zip(gs) {
            per[c].0[s].g = g;
        }
    }
    for (sides, _) in &per {
        for s in sides {
            let n = bodies[s.body].dof_count();
            if s.h.iter().chain(&s.g).any(|&(d, _)| d >= n) {
                return Err(AssemblyError::Interface {
                    body: s.body,
                    what: format!("a point map names a dof beyond its {n} dofs"),
                });
            }
        }
    }
    let frames: Vec<Matrix3<f64>> = constraints.iter().map(|k| k.frame).collect();
    let triplets: Vec<(usize, usize, Matrix3<f64>)> = on_body
        .par_iter()
        .map(|list| body_blocks(list, &per, &frames))
        .collect::<Vec<_>>()
        .into_iter()
        .flatten()
        .collect();
    let laws = constraints.iter().map(|k| k.law).collect();
    let q = per.iter().map(|(_, q)| *q).collect();
    let problem = Problem::from_blocks(laws, q, triplets)?;
    Ok(Assembly {
        problem,
        sides: per.into_iter().map(|(s, _)| s).collect(),
        frames,
        dof_counts: bodies.iter().map(|b| b.dof_count()).collect(),
    })
}

impl Assembly {
    /// The generalized impulse of every body, `p_b = Σ_i ±H_iᵀ F_iᵀ r_i` (constraints in
    /// order), for [`ContactBody::apply_impulse`].
    pub fn body_impulses(&self, r: &[Vector3<f64>]) -> Vec<Vec<f64>> {
        let mut p: Vec<Vec<f64>> = self.dof_counts.iter().map(|&n| vec![0.0; n]).collect();
        for (c, sides) in self.sides.iter().enumerate() {
            let world = self.frames[c].transpose() * r[c];
            for s in sides {
                for &(d, h) in &s.h {
                    p[s.body][d] += s.sign * h.dot(&world);
                }
            }
        }
        p
    }

    /// Gives the impulses back to the bodies: each ends its step with `u = u_free + A⁻¹ p`.
    pub fn apply(&self, r: &[Vector3<f64>], bodies: &mut [&mut dyn ContactBody]) {
        for (b, p) in self.body_impulses(r).iter().enumerate() {
            bodies[b].apply_impulse(p);
        }
    }
}
