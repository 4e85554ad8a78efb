//! Frictionless unilateral contact of the whole Hermite curve with a horizontal seabed, by
//! the Bézier control points of its elements (`docs/theory/inextensible_beam.md`, "A seabed",
//! equations (S1)–(S5)).
//!
//! On element `e` of length `h` the cubic `x(ξ)` has the Bézier control points
//!
//! ```text
//! P₀ = x_e,  P₁ = x_e + (h/3) s_e,  P₂ = x_{e+1} − (h/3) s_{e+1},  P₃ = x_{e+1}        (S1)
//! ```
//!
//! and lies in their convex hull, so `y(ξ) ≥ L` on the whole element as soon as the heights
//! of its four control points are (`y` the vertical component, `L` the seabed's level). Every
//! one of these conditions involves the dofs of **one node** only, its height `p` and the
//! vertical component `σ` of its tangent:
//!
//! ```text
//! g_k(x) = p + c_k σ − L ≥ 0,   c_k = +h_e/3 (right: P₁ of the element after the node),
//!                               c_k = −h_{e−1}/3 (left: P₂ of the element before it),
//!                               c_k = 0 (the node itself, at the two ends only)       (S2)
//! ```
//!
//! (at an interior node the node's own condition is the mean of the two others). A node has
//! two or three of them; at most two are active at once, and two active ones mean `p = L`,
//! `σ = 0`: the node lies on the seabed with a level tangent, which is what a `C¹` curve
//! touching a plane from above must do. With one active condition the node's height and
//! tangent move together (`p = L − c σ`): the element's curve touches the seabed at one point
//! inside it, and a node arriving with a steep tangent lands smoothly instead of being turned
//! level in one step.
//!
//! In the block Newton–KKT engine an active condition is a blocked unknown: both of the node's
//! vertical dofs with two active conditions; with one, the node's dofs are written in the
//! basis `(g, σ)`, `p = g − c σ`, for the three components alike (so the Hessian keeps its
//! `H ⊗ I₃` structure), and the vertical `g` is blocked (S3). The multipliers `μ_k ≥ 0` of
//! the active conditions follow from the reaction `(R_p, R_σ)` at the node's vertical dofs,
//! `R = Σ_k μ_k ∇g_k`, i.e. `Σ μ_k = R_p`, `Σ c_k μ_k = R_σ` (S4); an end pinned on the seabed
//! has its height prescribed, and its control-point condition bounds its tangent alone
//! (`μ = R_σ/c`). The active set is updated before every Newton solve, as a primal–dual
//! active set: a condition whose multiplier is negative is dropped, a violated one is added
//! and the node projected onto its active conditions. The seabed's work over a step is
//! `Σ_k μ_k Δg_k` (S5), nonzero only for conditions that became active during the step.

use crate::kkt_block::BlockKkt;
use crate::model::{Beam, DIM, Seabed, norm};

/// The node's own height (the two ends only).
pub(crate) const NODE: u8 = 1;
/// The control point `P₁ = x_e + (h/3) s_e` of the element after the node.
pub(crate) const RIGHT: u8 = 2;
/// The control point `P₂ = x_{e+1} − (h/3) s_{e+1}` of the element before the node.
pub(crate) const LEFT: u8 = 4;

/// The seabed's active set: per node, the bits of its active conditions (S2).
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct ActiveSet {
    pub active: Vec<u8>,
}

/// The conditions (S2) a node has, as `(bit, c_k)`.
pub(crate) fn conditions(model: &Beam, i: usize) -> impl Iterator<Item = (u8, f64)> {
    let n = model.n_nodes();
    let el = model.elements();
    let right = (i + 1 < n).then(|| (RIGHT, el[i].length / 3.0));
    let left = (i > 0).then(|| (LEFT, -el[i - 1].length / 3.0));
    let node = (i == 0 || i + 1 == n).then_some((NODE, 0.0));
    [node, right, left].into_iter().flatten()
}

/// `g_k(x)` of node `i` (S2).
#[inline]
pub(crate) fn gap(model: &Beam, sb: Seabed, x: &[f64], i: usize, c: f64) -> f64 {
    let n_s = model.n_scalar();
    x[sb.axis * n_s + 2 * i] + c * x[sb.axis * n_s + 2 * i + 1] - sb.level
}

impl ActiveSet {
    /// The active set of a configuration: every condition at or below 0 (to round-off).
    pub(crate) fn of(model: &Beam, x: &[f64]) -> Self {
        let Some(sb) = model.seabed() else {
            return Self::default();
        };
        let tol = round_off(sb);
        let active = (0..model.n_nodes())
            .map(|i| {
                conditions(model, i)
                    .filter(|&(bit, c)| applies(model, i, bit) && gap(model, sb, x, i, c) <= tol)
                    .fold(0, |a, (bit, _)| a | bit)
            })
            .collect();
        Self { active }
    }

    /// The active set from numbers (a checkpoint's), keeping only conditions the node has.
    pub(crate) fn from_numbers(model: &Beam, v: &[f64]) -> Self {
        let active = (0..model.n_nodes())
            .map(|i| {
                let bits = v
                    .get(i)
                    .filter(|b| b.is_finite() && (0.0..8.0).contains(*b))
                    .map_or(0, |&b| b as u8);
                conditions(model, i)
                    .filter(|&(bit, _)| applies(model, i, bit))
                    .fold(0, |a, (bit, _)| a | (bits & bit))
            })
            .collect();
        Self { active }
    }

    /// The bits as numbers (for a checkpoint).
    pub(crate) fn to_numbers(&self) -> Vec<f64> {
        self.active.iter().map(|&b| f64::from(b)).collect()
    }

    /// Whether node `i` (with a free position) lies on the seabed: its own height or two
    /// conditions active.
    pub(crate) fn on_seabed(&self, model: &Beam, i: usize) -> bool {
        let b = self.active.get(i).copied().unwrap_or(0);
        !model.is_fixed(2 * i) && (b & NODE != 0 || b.count_ones() >= 2)
    }

    /// The nodes with a free position lying on the seabed.
    pub(crate) fn nodes_on_seabed(&self, model: &Beam) -> usize {
        (0..self.active.len())
            .filter(|&i| self.on_seabed(model, i))
            .count()
    }

    /// Node `i`'s active bits (0 beyond the set).
    #[inline]
    pub(crate) fn bits(&self, i: usize) -> u8 {
        self.active.get(i).copied().unwrap_or(0)
    }
}

/// The round-off below which a condition counts as met: `10⁻¹² max(1, |L|)`.
fn round_off(sb: Seabed) -> f64 {
    1e-12 * sb.level.abs().max(1.0)
}

/// Whether condition `bit` applies to node `i`: an end whose height is prescribed has only its
/// control-point condition, on its tangent, and none if that tangent is prescribed too.
fn applies(model: &Beam, i: usize, bit: u8) -> bool {
    if model.is_fixed(2 * i) {
        bit != NODE && !model.is_fixed(2 * i + 1)
    } else {
        true
    }
}

/// How the block engine writes node `i`'s vertical dofs (S3): the blocked ones
/// (`[height, tangent]`) and the shift `c` of the basis `(g, σ)`, `p = g − c σ` (0: none).
pub(crate) fn blocking(model: &Beam, contact: &ActiveSet, i: usize) -> ([bool; 2], f64) {
    let bits = contact.bits(i);
    if bits == 0 {
        return ([false; 2], 0.0);
    }
    if model.is_fixed(2 * i) {
        // The height is prescribed: the condition holds the tangent.
        return ([false, true], 0.0);
    }
    if bits.count_ones() >= 2 {
        return ([true, true], 0.0);
    }
    let c = conditions(model, i)
        .find(|&(bit, _)| bits & bit != 0)
        .map_or(0.0, |(_, c)| c);
    ([true, false], c)
}

/// Projects node `i` of `x` onto its active conditions: with two, its height to the level and
/// its tangent level ([`level_tangent`]); with one, its height to `L − c σ`; an end pinned on
/// the seabed has its tangent's vertical component set to `(L − p)/c`.
pub(crate) fn project(model: &Beam, contact: &ActiveSet, x: &mut [f64], i: usize) {
    let Some(sb) = model.seabed() else {
        return;
    };
    let bits = contact.bits(i);
    if bits == 0 {
        return;
    }
    let n_s = model.n_scalar();
    let (kp, ks) = (sb.axis * n_s + 2 * i, sb.axis * n_s + 2 * i + 1);
    let mut active = conditions(model, i).filter(|&(bit, _)| bits & bit != 0);
    if model.is_fixed(2 * i) {
        if let Some((_, c)) = active.next()
            && c != 0.0
        {
            set_vertical_tangent(model, x, i, (sb.level - x[kp]) / c);
        }
        return;
    }
    if bits.count_ones() >= 2 {
        x[kp] = sb.level;
        set_vertical_tangent(model, x, i, 0.0);
    } else if let Some((_, c)) = active.next() {
        x[kp] = sb.level - c * x[ks];
    }
}

/// Sets the vertical component of node `i`'s tangent to `v`, turning the tangent in its
/// vertical plane so that its length is kept (a unit tangent stays one; if `|v|` exceeds the
/// length, the horizontal part is dropped). A tangent with no horizontal part takes the
/// direction of the chord through the node's neighbours, projected on the plane.
fn set_vertical_tangent(model: &Beam, x: &mut [f64], i: usize, v: f64) {
    let Some(sb) = model.seabed() else {
        return;
    };
    let n_s = model.n_scalar();
    let (a, k) = (sb.axis, 2 * i + 1);
    if model.is_fixed(k) {
        return;
    }
    let t: [f64; 3] = std::array::from_fn(|c| x[c * n_s + k]);
    let length = norm(t);
    let mut flat = t;
    flat[a] = 0.0;
    if norm(flat) <= 1e-12 * length {
        let (lo, hi) = (i.saturating_sub(1), (i + 1).min(model.n_nodes() - 1));
        flat = std::array::from_fn(|c| x[c * n_s + 2 * hi] - x[c * n_s + 2 * lo]);
        flat[a] = 0.0;
        if norm(flat) == 0.0 {
            flat = [0.0; 3];
            flat[(a + 1) % DIM] = 1.0;
        }
    }
    let horizontal = (length * length - v * v).max(0.0).sqrt();
    let f = horizontal / norm(flat);
    for c in 0..DIM {
        x[c * n_s + k] = flat[c] * f;
    }
    x[a * n_s + k] = v;
}

/// Projects every node of `x` onto its active conditions ([`project`]).
pub(crate) fn project_all(model: &Beam, contact: &ActiveSet, x: &mut [f64]) {
    if model.seabed().is_none() {
        return;
    }
    for i in 0..model.n_nodes() {
        project(model, contact, x, i);
    }
}

/// The multipliers `μ_k` of node `i`'s active conditions (S4), as `(bit, μ)`, from the
/// residual `res` (the reaction at blocked dofs).
pub(crate) fn multipliers(
    model: &Beam,
    contact: &ActiveSet,
    res: &[f64],
    i: usize,
) -> Vec<(u8, f64)> {
    let Some(sb) = model.seabed() else {
        return Vec::new();
    };
    let bits = contact.bits(i);
    let n_s = model.n_scalar();
    let (rp, rs) = (res[sb.axis * n_s + 2 * i], res[sb.axis * n_s + 2 * i + 1]);
    let act: Vec<(u8, f64)> = conditions(model, i)
        .filter(|&(bit, _)| bits & bit != 0)
        .collect();
    match act.as_slice() {
        [] => Vec::new(),
        [(bit, c)] if model.is_fixed(2 * i) => vec![(*bit, if *c != 0.0 { rs / c } else { 0.0 })],
        [(bit, _)] => vec![(*bit, rp)],
        [(b1, c1), (b2, c2), ..] => {
            // μ₁ + μ₂ = R_p, c₁μ₁ + c₂μ₂ = R_σ.
            let d = c2 - c1;
            vec![(*b1, (c2 * rp - rs) / d), (*b2, (rs - c1 * rp) / d)]
        }
    }
}

/// Updates the active set from the residual in `kkt.res` at `x` (a primal–dual active-set
/// step): conditions whose multiplier is below `−floor` are dropped, violated ones added, and
/// the node projected onto its active conditions. Returns the number of changes (0 without a
/// seabed).
pub(crate) fn update(
    model: &Beam,
    kkt: &BlockKkt,
    x: &mut [f64],
    contact: &mut ActiveSet,
    floor: f64,
) -> usize {
    let Some(sb) = model.seabed() else {
        return 0;
    };
    contact.active.resize(model.n_nodes(), 0);
    let mut changes = 0;
    for i in 0..model.n_nodes() {
        let before = contact.active[i];
        for (bit, mu) in multipliers(model, contact, &kkt.res, i) {
            if mu < -floor {
                contact.active[i] &= !bit;
            }
        }
        let released = contact.active[i];
        // Added conditions may make others violated after the projection: at most three
        // rounds (a node has at most three conditions).
        for _ in 0..3 {
            let mut added = false;
            for (bit, c) in conditions(model, i) {
                if contact.active[i] & bit == 0
                    && applies(model, i, bit)
                    && gap(model, sb, x, i, c) < 0.0
                {
                    contact.active[i] |= bit;
                    added = true;
                }
            }
            if !added {
                break;
            }
            project(model, contact, x, i);
        }
        if contact.active[i] != before {
            changes += (contact.active[i] ^ before).count_ones() as usize;
        } else if released != before {
            changes += 1;
        }
    }
    changes
}

/// Whether an inactive condition is violated (a part of the curve below the seabed that the
/// active set does not hold yet).
pub(crate) fn penetrates(model: &Beam, contact: &ActiveSet, x: &[f64]) -> bool {
    model.seabed().is_some_and(|sb| {
        (0..model.n_nodes()).any(|i| {
            conditions(model, i).any(|(bit, c)| {
                contact.bits(i) & bit == 0
                    && applies(model, i, bit)
                    && gap(model, sb, x, i, c) < 0.0
            })
        })
    })
}

/// The seabed's work over a step from `x_old` (active set `before`) to the converged `x_new`
/// (active set `after`, residual `res`) (S5): `Σ_k μ_k (L − g_k(x_old))` over the conditions
/// active at the end that were not at the start (those active at both did no work, `Δg = 0`);
/// for an end pinned on the seabed, `R_σ Δσ` (its height is the support's).
pub(crate) fn work(
    model: &Beam,
    before: &ActiveSet,
    after: &ActiveSet,
    res: &[f64],
    x_old: &[f64],
    x_new: &[f64],
) -> f64 {
    let Some(sb) = model.seabed() else {
        return 0.0;
    };
    let n_s = model.n_scalar();
    let mut w = 0.0;
    for i in 0..model.n_nodes() {
        if after.bits(i) == 0 {
            continue;
        }
        if model.is_fixed(2 * i) {
            let k = sb.axis * n_s + 2 * i + 1;
            w += res[k] * (x_new[k] - x_old[k]);
            continue;
        }
        for (bit, mu) in multipliers(model, after, res, i) {
            if before.bits(i) & bit == 0 {
                let c = conditions(model, i)
                    .find(|&(b, _)| b == bit)
                    .map_or(0.0, |(_, c)| c);
                w += mu * -gap(model, sb, x_old, i, c);
            }
        }
    }
    w
}

/// The lowest point of the curve relative to the seabed over the Bézier hulls of the
/// elements: the smallest `g_k` of every node (`+∞` without a seabed). The curve's lowest
/// point is at or above it.
pub(crate) fn lowest_control_point(model: &Beam, x: &[f64]) -> f64 {
    model.seabed().map_or(f64::INFINITY, |sb| {
        (0..model.n_nodes())
            .flat_map(|i| conditions(model, i).map(move |(_, c)| gap(model, sb, x, i, c)))
            .fold(f64::INFINITY, f64::min)
    })
}
