//! The beam model: parameters, ends, the Hermite mesh, its matrices and the state layout.
//!
//! # Numbering
//! The three space components never couple in the linear parts (mass, bending, augmentation),
//! so the model works with *scalar* Hermite fields: node `i` carries the value dof `2i` and the
//! slope dof `2i + 1`, `n_scalar() = 2 (N + 1)` per component. A full configuration is a
//! column-major `3 × n_scalar()` vector: entry `c · n_scalar() + k` is scalar dof `k` of
//! component `c` (the layout [`fem_assembly::SparseCholesky::solve_many_in_place`] takes with
//! three right-hand sides). [`BeamState`] is the user-facing form (positions and tangents per
//! node).
//!
//! # Constraint points
//! `|x'| = 1` is imposed at the 2 Gauss points of every element
//! ([`fem_elements::hermite::constraint_rule`]); point `j = 2e + q` is point `q` of element `e`.

use std::fmt;
use std::sync::Arc;

use fem_assembly::{AssemblyPlan, CsrMatrix};
use fem_elements::HermiteCubic;
use fem_elements::hermite::{N_LOCAL, constraint_rule};

use crate::error::BeamError;

/// Number of space components.
pub const DIM: usize = 3;

/// A prescribed end position: fixed, or a function of time.
#[derive(Clone)]
pub enum Placement {
    /// A fixed point.
    Fixed([f64; 3]),
    /// A point moving in time, `t ↦ x(t)` (for example three
    /// [`fem_constraints::Prescribed`] signals wrapped in a closure).
    Moving(Arc<dyn Fn(f64) -> [f64; 3] + Send + Sync>),
}

impl Placement {
    /// A moving placement from a closure.
    pub fn moving(f: impl Fn(f64) -> [f64; 3] + Send + Sync + 'static) -> Self {
        Self::Moving(Arc::new(f))
    }

    /// The position at time `t`.
    pub fn at(&self, t: f64) -> [f64; 3] {
        match self {
            Placement::Fixed(x) => *x,
            Placement::Moving(f) => f(t),
        }
    }
}

impl fmt::Debug for Placement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Placement::Fixed(x) => f.debug_tuple("Fixed").field(x).finish(),
            Placement::Moving(_) => f.write_str("Moving(<fn>)"),
        }
    }
}

/// The support of one end of the beam (Glowinski–Holmström (72), (73)).
#[derive(Clone, Debug)]
pub enum End {
    /// No condition.
    Free,
    /// The position is prescribed (72), possibly moving in time.
    Pinned(Placement),
    /// Position and unit tangent prescribed (73); the tangent is normalised by the model.
    Clamped {
        /// The prescribed position.
        position: Placement,
        /// The prescribed tangent `x'` (normalised to unit length).
        tangent: [f64; 3],
    },
}

impl End {
    /// A pinned end at a fixed point.
    pub fn pinned(x: [f64; 3]) -> Self {
        End::Pinned(Placement::Fixed(x))
    }

    /// A clamped end at a fixed point with the given tangent.
    pub fn clamped(x: [f64; 3], tangent: [f64; 3]) -> Self {
        End::Clamped {
            position: Placement::Fixed(x),
            tangent,
        }
    }

    fn placement(&self) -> Option<&Placement> {
        match self {
            End::Free => None,
            End::Pinned(p) | End::Clamped { position: p, .. } => Some(p),
        }
    }
}

/// A constant point force at a node.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PointLoad {
    /// Node index, `0..=n_elements`.
    pub node: usize,
    /// The force (N).
    pub force: [f64; 3],
}

/// Physical parameters of a beam (the paper's experiment (95) is [`BeamParameters::paper_95`]).
#[derive(Clone, Debug)]
pub struct BeamParameters {
    /// Number of elements `N` (≥ 1).
    pub n_elements: usize,
    /// Length `L` (m), > 0.
    pub length: f64,
    /// Flexural stiffness `EI` (N m²), ≥ 0 (0 is the chain limit, statics only with care).
    pub bending_stiffness: f64,
    /// Mass per unit length `ρ` (kg/m), > 0.
    pub density: f64,
    /// Gravity acceleration `g` (m/s²); the distributed load is `f = ρ g`.
    pub gravity: [f64; 3],
    /// The support at `s = 0` (end A).
    pub end_a: End,
    /// The support at `s = L` (end B).
    pub end_b: End,
    /// Point loads at nodes.
    pub point_loads: Vec<PointLoad>,
}

impl BeamParameters {
    /// The paper's experiment (95) in the `(x, y)` plane, gravity `−9.81` along `y`: `N = 20`,
    /// `L = 32.6` m, `EI = 700`, `ρ = 7.67` kg/m, A pinned at `(0, 0)`, B pinned at `(20, 0)`
    /// (the static start; release B with [`BeamModel::with_ends`]).
    pub fn paper_95() -> Self {
        Self {
            n_elements: 20,
            length: 32.6,
            bending_stiffness: 700.0,
            density: 7.67,
            gravity: [0.0, -9.81, 0.0],
            end_a: End::pinned([0.0; 3]),
            end_b: End::pinned([20.0, 0.0, 0.0]),
            point_loads: Vec::new(),
        }
    }
}

/// A Hermite-cubic beam: mesh, boundary conditions, and the constant matrices.
#[derive(Clone, Debug)]
pub struct BeamModel {
    params: BeamParameters,
    node_s: Vec<f64>,
    elements: Vec<HermiteCubic>,
    plan: AssemblyPlan,
    mass: CsrMatrix<f64>,
    bending: CsrMatrix<f64>,
    load: Vec<f64>,
    fixed: Vec<bool>,
    point_weight: Vec<f64>,
    point_dn: Vec<[f64; N_LOCAL]>,
}

impl BeamModel {
    /// A uniform mesh of `params.n_elements` elements on `[0, L]`.
    pub fn new(params: BeamParameters) -> Result<Self, BeamError> {
        check_positive("n_elements", params.n_elements as f64)?;
        check_positive("length", params.length)?;
        let h = params.length / params.n_elements as f64;
        Self::with_element_lengths(params.clone(), vec![h; params.n_elements])
    }

    /// A mesh along a polyline (generator points or the nodes of a Gmsh line mesh, in order):
    /// element `e` has the length `|points[e+1] − points[e]|`. `params.n_elements` and
    /// `params.length` are replaced by the polyline's. [`BeamState::from_polyline`] gives
    /// the matching initial state.
    pub fn from_polyline(
        mut params: BeamParameters,
        points: &[[f64; 3]],
    ) -> Result<Self, BeamError> {
        if points.len() < 2 {
            return Err(BeamError::InvalidParameter {
                name: "points",
                value: points.len() as f64,
                expected: "at least 2 points",
            });
        }
        let lengths: Vec<f64> = points.windows(2).map(|w| dist(w[0], w[1])).collect();
        params.n_elements = lengths.len();
        params.length = lengths.iter().sum();
        Self::with_element_lengths(params, lengths)
    }

    /// The same mesh and material with other ends (for example end B released after a static
    /// solve with both ends pinned).
    pub fn with_ends(&self, end_a: End, end_b: End) -> Result<Self, BeamError> {
        let mut params = self.params.clone();
        params.end_a = end_a;
        params.end_b = end_b;
        let lengths = self.elements.iter().map(|e| e.length).collect();
        Self::with_element_lengths(params, lengths)
    }

    fn with_element_lengths(params: BeamParameters, lengths: Vec<f64>) -> Result<Self, BeamError> {
        check_positive("density", params.density)?;
        if !(params.bending_stiffness >= 0.0 && params.bending_stiffness.is_finite()) {
            return Err(BeamError::InvalidParameter {
                name: "bending_stiffness",
                value: params.bending_stiffness,
                expected: "a finite number >= 0",
            });
        }
        for &h in &lengths {
            check_positive("element length", h)?;
        }
        for g in params.gravity {
            if !g.is_finite() {
                return Err(BeamError::InvalidParameter {
                    name: "gravity",
                    value: g,
                    expected: "finite components",
                });
            }
        }
        let n_el = lengths.len();
        let n_nodes = n_el + 1;
        for load in &params.point_loads {
            if load.node >= n_nodes || load.force.iter().any(|f| !f.is_finite()) {
                return Err(BeamError::InvalidParameter {
                    name: "point_loads.node",
                    value: load.node as f64,
                    expected: "a node index 0..=n_elements and a finite force",
                });
            }
        }
        for end in [&params.end_a, &params.end_b] {
            if let End::Clamped { tangent, .. } = end {
                let n = norm(*tangent);
                if !(n > 0.0 && n.is_finite()) {
                    return Err(BeamError::InvalidParameter {
                        name: "clamped tangent length",
                        value: n,
                        expected: "a nonzero finite vector",
                    });
                }
            }
        }
        let elements: Vec<HermiteCubic> = lengths.iter().map(|&h| HermiteCubic::new(h)).collect();
        let mut node_s = vec![0.0; n_nodes];
        for e in 0..n_el {
            node_s[e + 1] = node_s[e] + lengths[e];
        }
        let n_s = 2 * n_nodes;
        let cell_dofs: Vec<Option<usize>> = (0..n_el)
            .flat_map(|e| (0..N_LOCAL).map(move |a| Some(2 * e + a)))
            .collect();
        let plan = AssemblyPlan::new(n_s, N_LOCAL, &cell_dofs);
        let mass = plan.assemble_matrix(|e, out| {
            flatten(&elements[e].mass(params.density), out);
        });
        let bending = plan.assemble_matrix(|e, out| {
            flatten(&elements[e].bending(params.bending_stiffness), out);
        });
        let mut load = vec![0.0; DIM * n_s];
        for c in 0..DIM {
            let f = params.density * params.gravity[c];
            let lc =
                plan.assemble_vector(|e, out| out.copy_from_slice(&elements[e].uniform_load(f)));
            load[c * n_s..(c + 1) * n_s].copy_from_slice(&lc);
        }
        for pl in &params.point_loads {
            for c in 0..DIM {
                load[c * n_s + 2 * pl.node] += pl.force[c];
            }
        }
        let mut fixed = vec![false; n_s];
        for (end, node) in [(&params.end_a, 0), (&params.end_b, n_el)] {
            match end {
                End::Free => {}
                End::Pinned(_) => fixed[2 * node] = true,
                End::Clamped { .. } => {
                    fixed[2 * node] = true;
                    fixed[2 * node + 1] = true;
                }
            }
        }
        let rule = constraint_rule();
        let mut point_weight = Vec::with_capacity(2 * n_el);
        let mut point_dn = Vec::with_capacity(2 * n_el);
        for el in &elements {
            for (&xi, &w) in rule.points.iter().zip(&rule.weights) {
                point_weight.push(w * el.length);
                point_dn.push(el.first_derivatives(xi));
            }
        }
        Ok(Self {
            params,
            node_s,
            elements,
            plan,
            mass,
            bending,
            load,
            fixed,
            point_weight,
            point_dn,
        })
    }

    /// The parameters (with `n_elements` and `length` of the actual mesh).
    pub fn parameters(&self) -> &BeamParameters {
        &self.params
    }

    /// Number of elements.
    pub fn n_elements(&self) -> usize {
        self.elements.len()
    }

    /// Number of nodes, `n_elements() + 1`.
    pub fn n_nodes(&self) -> usize {
        self.elements.len() + 1
    }

    /// Scalar dofs per component, `2 n_nodes()`.
    pub fn n_scalar(&self) -> usize {
        2 * self.n_nodes()
    }

    /// Number of constraint points, `2 n_elements()`.
    pub fn n_points(&self) -> usize {
        self.point_weight.len()
    }

    /// Reference arc length of each node.
    pub fn node_arc_lengths(&self) -> &[f64] {
        &self.node_s
    }

    /// Total length `L`.
    pub fn length(&self) -> f64 {
        *self.node_s.last().expect("at least one element")
    }

    /// The elements.
    pub fn elements(&self) -> &[HermiteCubic] {
        &self.elements
    }

    /// The assembly plan of the scalar Hermite field (cells = elements, 4 local dofs).
    pub fn plan(&self) -> &AssemblyPlan {
        &self.plan
    }

    /// The consistent mass `ρ ∫ N_a N_b` of one component, all scalar dofs.
    pub fn mass(&self) -> &CsrMatrix<f64> {
        &self.mass
    }

    /// The bending stiffness `EI ∫ N_a'' N_b''` of one component, all scalar dofs.
    pub fn bending(&self) -> &CsrMatrix<f64> {
        &self.bending
    }

    /// The load vector (gravity `ρ g` and point loads), column-major `3 × n_scalar()`.
    pub fn load(&self) -> &[f64] {
        &self.load
    }

    /// Whether scalar dof `k` is prescribed (the same for the three components).
    pub fn is_fixed(&self, k: usize) -> bool {
        self.fixed[k]
    }

    /// The augmentation matrix `r Σ_q w_q h N_a'(ξ_q) N_b'(ξ_q)` at the constraint points.
    pub fn axial(&self, r: f64) -> CsrMatrix<f64> {
        let rule = constraint_rule();
        self.plan
            .assemble_matrix(|e, out| flatten(&self.elements[e].axial(r, &rule), out))
    }

    /// Quadrature weight `w_q h_e` of each constraint point.
    pub fn point_weights(&self) -> &[f64] {
        &self.point_weight
    }

    /// `N_a'(s_j)` (the four local shape-function derivatives) at each constraint point.
    pub(crate) fn point_derivatives(&self) -> &[[f64; N_LOCAL]] {
        &self.point_dn
    }

    /// Element of constraint point `j`.
    pub fn point_element(j: usize) -> usize {
        j / 2
    }

    /// Arc length of each constraint point.
    pub fn point_arc_lengths(&self) -> Vec<f64> {
        let rule = constraint_rule();
        (0..self.n_points())
            .map(|j| {
                let e = j / 2;
                self.node_s[e] + rule.points[j % 2] * self.elements[e].length
            })
            .collect()
    }

    /// `x'` at every constraint point of a column-major configuration `x`.
    pub fn tangents_at_points(&self, x: &[f64], out: &mut [[f64; 3]]) {
        let n_s = self.n_scalar();
        for (j, o) in out.iter_mut().enumerate() {
            let e = j / 2;
            let dn = &self.point_dn[j];
            for c in 0..DIM {
                let base = c * n_s + 2 * e;
                *o.get_mut(c).expect("3 components") =
                    (0..N_LOCAL).map(|a| dn[a] * x[base + a]).sum();
            }
        }
    }

    /// Adds `Σ_j g_j · N'(s_j) w_j` (the transpose of [`BeamModel::tangents_at_points`],
    /// weighted) into the column-major `out`.
    pub fn add_point_forces(&self, g: &[[f64; 3]], out: &mut [f64]) {
        let n_s = self.n_scalar();
        for (j, gj) in g.iter().enumerate() {
            let e = j / 2;
            let dn = &self.point_dn[j];
            let w = self.point_weight[j];
            for c in 0..DIM {
                let base = c * n_s + 2 * e;
                for a in 0..N_LOCAL {
                    out[base + a] += w * dn[a] * gj[c];
                }
            }
        }
    }

    /// The prescribed values at time `t` written into the fixed entries of a column-major
    /// configuration `x` (other entries untouched).
    pub fn apply_prescribed(&self, t: f64, x: &mut [f64]) {
        let n_s = self.n_scalar();
        let last = self.n_nodes() - 1;
        for (end, node) in [(&self.params.end_a, 0), (&self.params.end_b, last)] {
            if let Some(p) = end.placement() {
                let pos = p.at(t);
                for c in 0..DIM {
                    x[c * n_s + 2 * node] = pos[c];
                }
            }
            if let End::Clamped { tangent, .. } = end {
                let n = norm(*tangent);
                for c in 0..DIM {
                    x[c * n_s + 2 * node + 1] = tangent[c] / n;
                }
            }
        }
    }

    /// Whether the static problem is well posed: at least one end position prescribed.
    pub fn has_support(&self) -> bool {
        self.fixed.iter().any(|&f| f)
    }

    /// Bending energy `½ EI ∫ |x''|²` of a column-major configuration.
    pub fn bending_energy(&self, x: &[f64]) -> f64 {
        let n_s = self.n_scalar();
        (0..DIM)
            .map(|c| {
                let xc = &x[c * n_s..(c + 1) * n_s];
                0.5 * fem_assembly::sparse::bilinear(&self.bending, xc, xc)
            })
            .sum()
    }

    /// Potential of the loads, `−∫ f·x − Σ P·x(node)`.
    pub fn load_potential(&self, x: &[f64]) -> f64 {
        -self.load.iter().zip(x).map(|(f, v)| f * v).sum::<f64>()
    }

    /// Kinetic energy `½ ∫ ρ |v|²` of a column-major velocity.
    pub fn kinetic_energy(&self, v: &[f64]) -> f64 {
        let n_s = self.n_scalar();
        (0..DIM)
            .map(|c| {
                let vc = &v[c * n_s..(c + 1) * n_s];
                0.5 * fem_assembly::sparse::bilinear(&self.mass, vc, vc)
            })
            .sum()
    }

    /// Samples the Hermite interpolation of `state` at `per_element` equally spaced points of
    /// every element (its start included) plus the last node: `per_element · N + 1` samples,
    /// a smooth polyline for output.
    pub fn sample(&self, state: &BeamState, per_element: usize) -> Vec<Sample> {
        let k = per_element.max(1);
        let x = state.to_columns();
        let n_s = self.n_scalar();
        let mut out = Vec::with_capacity(k * self.n_elements() + 1);
        for (e, el) in self.elements.iter().enumerate() {
            let n_i = if e + 1 == self.n_elements() { k + 1 } else { k };
            for i in 0..n_i {
                let xi = i as f64 / k as f64;
                let (nv, nd) = (el.values(xi), el.first_derivatives(xi));
                let mut position = [0.0; 3];
                let mut tangent = [0.0; 3];
                for c in 0..DIM {
                    let dofs: [f64; 4] = std::array::from_fn(|a| x[c * n_s + 2 * e + a]);
                    position[c] = HermiteCubic::combine(&nv, &dofs);
                    tangent[c] = HermiteCubic::combine(&nd, &dofs);
                }
                out.push(Sample {
                    s: self.node_s[e] + xi * el.length,
                    position,
                    tangent,
                });
            }
        }
        out
    }
}

/// One sample of the Hermite interpolation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sample {
    /// Reference arc length.
    pub s: f64,
    /// Position `x(s)`.
    pub position: [f64; 3],
    /// Tangent `x'(s)` (its length is the stretch).
    pub tangent: [f64; 3],
}

/// Node positions and tangents of a beam.
#[derive(Clone, Debug, PartialEq)]
pub struct BeamState {
    /// `x(sᵢ)` per node.
    pub positions: Vec<[f64; 3]>,
    /// `x'(sᵢ)` per node.
    pub tangents: Vec<[f64; 3]>,
}

impl BeamState {
    /// The straight beam `x(s) = origin + s d` with `d` normalised.
    pub fn straight(model: &BeamModel, origin: [f64; 3], direction: [f64; 3]) -> Self {
        let d = normalized(direction);
        let positions = model
            .node_arc_lengths()
            .iter()
            .map(|&s| std::array::from_fn(|c| origin[c] + s * d[c]))
            .collect();
        Self {
            positions,
            tangents: vec![d; model.n_nodes()],
        }
    }

    /// A circular arc of length `L` from `a` to `b` (needs `|b − a| < L`), bulging along
    /// `bulge` (its component normal to `b − a`): an inextensible initial guess between two
    /// pinned ends. Falls back to the straight segment when `|b − a| ≥ L`.
    pub fn arc(model: &BeamModel, a: [f64; 3], b: [f64; 3], bulge: [f64; 3]) -> Self {
        let l = model.length();
        let chord_v = sub(b, a);
        let c = norm(chord_v);
        if c >= l * (1.0 - 1e-12) || c == 0.0 {
            return Self::straight(model, a, chord_v);
        }
        let u = normalized(chord_v);
        let bn = sub(bulge, scale(u, dot(bulge, u)));
        let n = normalized(bn);
        // sin θ / θ = c / L on (0, π): bisection.
        let (mut lo, mut hi) = (1e-12, std::f64::consts::PI);
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            if mid.sin() / mid > c / l {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        let theta = 0.5 * (lo + hi);
        let radius = l / (2.0 * theta);
        // Centre on the far side of the bulge: mid − n R cos θ.
        let mid = scale(add(a, b), 0.5);
        let centre = sub(mid, scale(n, radius * theta.cos()));
        let mut positions = Vec::with_capacity(model.n_nodes());
        let mut tangents = Vec::with_capacity(model.n_nodes());
        for &s in model.node_arc_lengths() {
            let phi = -theta + 2.0 * theta * s / l; // angle from the bulge direction, A at −θ
            let (sp, cp) = phi.sin_cos();
            positions.push(add(
                centre,
                add(scale(n, radius * cp), scale(u, radius * sp)),
            ));
            tangents.push(add(scale(n, -sp), scale(u, cp)));
        }
        Self {
            positions,
            tangents,
        }
    }

    /// Positions at the polyline's points with tangents along the averaged unit chords.
    pub fn from_polyline(points: &[[f64; 3]]) -> Self {
        let n = points.len();
        let chord = |i: usize| normalized(sub(points[i + 1], points[i]));
        let tangents = (0..n)
            .map(|i| {
                if i == 0 {
                    chord(0)
                } else if i + 1 == n {
                    chord(n - 2)
                } else {
                    normalized(add(chord(i - 1), chord(i)))
                }
            })
            .collect();
        Self {
            positions: points.to_vec(),
            tangents,
        }
    }

    /// Column-major `3 × 2 n_nodes` form (the model's layout).
    pub fn to_columns(&self) -> Vec<f64> {
        let n_s = 2 * self.positions.len();
        let mut x = vec![0.0; DIM * n_s];
        for (i, (p, t)) in self.positions.iter().zip(&self.tangents).enumerate() {
            for c in 0..DIM {
                x[c * n_s + 2 * i] = p[c];
                x[c * n_s + 2 * i + 1] = t[c];
            }
        }
        x
    }

    /// From the column-major form.
    pub fn from_columns(x: &[f64]) -> Self {
        let n_s = x.len() / DIM;
        let n = n_s / 2;
        Self {
            positions: (0..n)
                .map(|i| std::array::from_fn(|c| x[c * n_s + 2 * i]))
                .collect(),
            tangents: (0..n)
                .map(|i| std::array::from_fn(|c| x[c * n_s + 2 * i + 1]))
                .collect(),
        }
    }
}

fn check_positive(name: &'static str, v: f64) -> Result<(), BeamError> {
    if v > 0.0 && v.is_finite() {
        Ok(())
    } else {
        Err(BeamError::InvalidParameter {
            name,
            value: v,
            expected: "a positive finite number",
        })
    }
}

fn flatten(m: &[[f64; N_LOCAL]; N_LOCAL], out: &mut [f64]) {
    for a in 0..N_LOCAL {
        out[a * N_LOCAL..(a + 1) * N_LOCAL].copy_from_slice(&m[a]);
    }
}

pub(crate) fn dot(a: [f64; 3], b: [f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}
pub(crate) fn norm(a: [f64; 3]) -> f64 {
    dot(a, a).sqrt()
}
pub(crate) fn add(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}
pub(crate) fn sub(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}
pub(crate) fn scale(a: [f64; 3], s: f64) -> [f64; 3] {
    [a[0] * s, a[1] * s, a[2] * s]
}
fn normalized(a: [f64; 3]) -> [f64; 3] {
    let n = norm(a);
    if n > 0.0 { scale(a, 1.0 / n) } else { a }
}
fn dist(a: [f64; 3], b: [f64; 3]) -> f64 {
    norm(sub(a, b))
}
