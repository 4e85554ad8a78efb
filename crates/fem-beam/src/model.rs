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
//! `|x'| = 1` is imposed pointwise, at the points chosen by [`ConstraintPoints`]:
//! - [`ConstraintPoints::Gauss`] (the default, the paper's): the 2 Gauss points of every
//!   element ([`fem_elements::hermite::constraint_rule`]); point `j = 2e + q` is point `q` of
//!   element `e`;
//! - [`ConstraintPoints::NodesAndMidpoints`]: every node and every element midpoint (the
//!   3-point Lobatto rule, Simpson weights), in arc-length order: node `i` is point `2i`, the
//!   midpoint of element `e` is point `2e + 1`. Fourth order where the Gauss points give second
//!   order, and the only choice for a cable (`EI = 0`); see `docs/theory/inextensible_beam.md`.
//!
//! Every point has a *home block* of the Newton–KKT system (the node whose block holds its
//! multiplier): element `e`'s Gauss points and its midpoint live in block `e + 1`, node `i`'s
//! point in block `i`.

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
    /// `fem_constraints::Prescribed` signals wrapped in a closure).
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

/// Where the inextensibility `|x'| = 1` is imposed (see the module documentation).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ConstraintPoints {
    /// The 2 Gauss points of every element (the paper's choice; Gauss weights `h/2`). The
    /// shipped default. The tip of a cantilever whose curvature varies converges at second
    /// order only, and `EI = 0` is refused (the nodal tangents of a cable are then a
    /// zero-energy mode).
    #[default]
    Gauss,
    /// Every node and every element midpoint (3-point Lobatto rule per element, Simpson
    /// weights `h/6, 2h/3, h/6`; a node shared by two elements gets `(h₁ + h₂)/6`): the nodal
    /// tangent dofs are unit vectors, positions converge at fourth order, and a cable
    /// (`EI = 0`) is well posed. A node whose tangent is prescribed (a clamped end) keeps its
    /// point, inactive (its multiplier stays 0).
    NodesAndMidpoints,
}

/// A horizontal seabed: the plane `x[axis] = level`, the whole beam kept at `x[axis] ≥ level`
/// by frictionless unilateral contact of the Bézier control points of its elements
/// (`docs/theory/inextensible_beam.md`, (S1)–(S5)).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Seabed {
    /// The vertical component (0, 1 or 2); gravity should point along `−e_axis`.
    pub axis: usize,
    /// The height of the plane (m).
    pub level: f64,
}

/// Discretization options of a [`Beam`] beyond its [`BeamParameters`].
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct BeamOptions {
    /// Where `|x'| = 1` is imposed (default: 2 Gauss points per element).
    pub constraint_points: ConstraintPoints,
    /// An optional seabed (unilateral contact of the whole curve).
    pub seabed: Option<Seabed>,
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
    /// Flexural stiffness `EI` (N m²), ≥ 0; 0 (a cable) needs
    /// [`ConstraintPoints::NodesAndMidpoints`].
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
    /// (the static start; release B with [`Beam::with_ends`]).
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
pub struct Beam {
    params: BeamParameters,
    node_s: Vec<f64>,
    elements: Vec<HermiteCubic>,
    plan: AssemblyPlan,
    mass: CsrMatrix<f64>,
    bending: CsrMatrix<f64>,
    load: Vec<f64>,
    fixed: Vec<bool>,
    options: BeamOptions,
    point_weight: Vec<f64>,
    point_dn: Vec<[f64; N_LOCAL]>,
    point_el: Vec<usize>,
    point_xi: Vec<f64>,
    /// Home block and slot (0 or 1) of each point in the Newton–KKT block structure.
    point_home: Vec<(usize, usize)>,
    /// Whether the point's tangent depends on at least one free dof.
    point_active: Vec<bool>,
}

impl Beam {
    /// A uniform mesh of `params.n_elements` elements on `[0, L]`.
    pub fn new(params: BeamParameters) -> Result<Self, BeamError> {
        Self::with_options(params, BeamOptions::default())
    }

    /// A uniform mesh with the given constraint points and seabed.
    pub fn with_options(params: BeamParameters, options: BeamOptions) -> Result<Self, BeamError> {
        check_positive("n_elements", params.n_elements as f64)?;
        check_positive("length", params.length)?;
        let h = params.length / params.n_elements as f64;
        Self::with_element_lengths(params.clone(), vec![h; params.n_elements], options)
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
        Self::with_element_lengths(params, lengths, BeamOptions::default())
    }

    /// The same mesh and material with other ends (for example end B released after a static
    /// solve with both ends pinned).
    pub fn with_ends(&self, end_a: End, end_b: End) -> Result<Self, BeamError> {
        let mut params = self.params.clone();
        params.end_a = end_a;
        params.end_b = end_b;
        let lengths = self.elements.iter().map(|e| e.length).collect();
        Self::with_element_lengths(params, lengths, self.options)
    }

    /// The same mesh, material and ends with other [`BeamOptions`] (constraint points,
    /// seabed).
    pub fn with_beam_options(&self, options: BeamOptions) -> Result<Self, BeamError> {
        let lengths = self.elements.iter().map(|e| e.length).collect();
        Self::with_element_lengths(self.params.clone(), lengths, options)
    }

    fn with_element_lengths(
        params: BeamParameters,
        lengths: Vec<f64>,
        options: BeamOptions,
    ) -> Result<Self, BeamError> {
        check_positive("density", params.density)?;
        if !(params.bending_stiffness >= 0.0 && params.bending_stiffness.is_finite()) {
            return Err(BeamError::InvalidParameter {
                name: "bending_stiffness",
                value: params.bending_stiffness,
                expected: "a finite number >= 0",
            });
        }
        if params.bending_stiffness == 0.0 && options.constraint_points == ConstraintPoints::Gauss {
            return Err(BeamError::CableNeedsNodalPoints);
        }
        if let Some(sb) = options.seabed
            && (sb.axis >= DIM || !sb.level.is_finite())
        {
            return Err(BeamError::InvalidParameter {
                name: "seabed",
                value: if sb.axis >= DIM {
                    sb.axis as f64
                } else {
                    sb.level
                },
                expected: "an axis 0, 1 or 2 and a finite level",
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
                    expected: "a node index from 0 to the number of elements, and a finite force",
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
        let mut point_weight = Vec::with_capacity(2 * n_el + 1);
        let mut point_dn = Vec::with_capacity(2 * n_el + 1);
        let mut point_el = Vec::with_capacity(2 * n_el + 1);
        let mut point_xi = Vec::with_capacity(2 * n_el + 1);
        let mut point_home = Vec::with_capacity(2 * n_el + 1);
        match options.constraint_points {
            ConstraintPoints::Gauss => {
                let rule = constraint_rule();
                for (e, el) in elements.iter().enumerate() {
                    for (q, (&xi, &w)) in rule.points.iter().zip(&rule.weights).enumerate() {
                        point_weight.push(w * el.length);
                        point_dn.push(el.first_derivatives(xi));
                        point_el.push(e);
                        point_xi.push(xi);
                        point_home.push((e + 1, q));
                    }
                }
            }
            ConstraintPoints::NodesAndMidpoints => {
                for (e, el) in elements.iter().enumerate() {
                    let h_prev = if e > 0 { elements[e - 1].length } else { 0.0 };
                    point_weight.push((h_prev + el.length) / 6.0);
                    point_dn.push(el.first_derivatives(0.0));
                    point_el.push(e);
                    point_xi.push(0.0);
                    point_home.push((e, 0));
                    point_weight.push(2.0 * el.length / 3.0);
                    point_dn.push(el.first_derivatives(0.5));
                    point_el.push(e);
                    point_xi.push(0.5);
                    point_home.push((e + 1, 1));
                }
                let el = &elements[n_el - 1];
                point_weight.push(el.length / 6.0);
                point_dn.push(el.first_derivatives(1.0));
                point_el.push(n_el - 1);
                point_xi.push(1.0);
                point_home.push((n_el, 0));
            }
        }
        let point_active = point_el
            .iter()
            .zip(&point_dn)
            .map(|(&e, dn)| (0..N_LOCAL).any(|a| dn[a] != 0.0 && !fixed[2 * e + a]))
            .collect();
        Ok(Self {
            params,
            node_s,
            elements,
            plan,
            mass,
            bending,
            load,
            fixed,
            options,
            point_weight,
            point_dn,
            point_el,
            point_xi,
            point_home,
            point_active,
        })
    }

    /// The discretization options (constraint points, seabed).
    pub fn options(&self) -> BeamOptions {
        self.options
    }

    /// The seabed, if any.
    pub fn seabed(&self) -> Option<Seabed> {
        self.options.seabed
    }

    /// The height above the seabed of the lowest Bézier control point of any element of
    /// `state` (`None` without a seabed): every point of the curve is at least this high,
    /// since an element's cubic lies in the convex hull of its control points
    /// (`docs/theory/inextensible_beam.md`, (S1)). Negative: part of the hull is below.
    pub fn seabed_clearance(&self, state: &BeamState) -> Option<f64> {
        self.options
            .seabed
            .map(|_| crate::seabed::lowest_control_point(self, &state.to_columns()))
    }

    /// Where `|x'| = 1` is imposed.
    pub fn constraint_points(&self) -> ConstraintPoints {
        self.options.constraint_points
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

    /// Number of constraint points: `2 n_elements()` (Gauss) or `2 n_elements() + 1` (nodes
    /// and midpoints).
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

    /// The augmentation matrix `r Σ_j w_j N'_j N'_jᵀ` at the model's constraint points (the
    /// Uzawa loop's `r K_r`, integrated with the same points as the constraint).
    pub fn axial(&self, r: f64) -> CsrMatrix<f64> {
        match self.options.constraint_points {
            ConstraintPoints::Gauss => {
                let rule = constraint_rule();
                self.plan
                    .assemble_matrix(|e, out| flatten(&self.elements[e].axial(r, &rule), out))
            }
            ConstraintPoints::NodesAndMidpoints => {
                let mut local = vec![[[0.0; N_LOCAL]; N_LOCAL]; self.n_elements()];
                for j in 0..self.n_points() {
                    let (dn, w) = (&self.point_dn[j], self.point_weight[j]);
                    let k = &mut local[self.point_el[j]];
                    for a in 0..N_LOCAL {
                        for b in 0..N_LOCAL {
                            k[a][b] += r * w * dn[a] * dn[b];
                        }
                    }
                }
                self.plan.assemble_matrix(|e, out| flatten(&local[e], out))
            }
        }
    }

    /// Quadrature weight `w_q h_e` of each constraint point.
    pub fn point_weights(&self) -> &[f64] {
        &self.point_weight
    }

    /// `N_a'(s_j)` (the four local shape-function derivatives of the point's element) at
    /// each constraint point.
    pub fn point_derivatives(&self) -> &[[f64; N_LOCAL]] {
        &self.point_dn
    }

    /// The element whose local dofs give the tangent at constraint point `j`.
    pub fn point_element(&self, j: usize) -> usize {
        self.point_el[j]
    }

    /// Home block (node) and slot (0 or 1) of constraint point `j` in the Newton–KKT system.
    pub(crate) fn point_home(&self, j: usize) -> (usize, usize) {
        self.point_home[j]
    }

    /// Whether constraint point `j` depends on a free dof (a clamped end's nodal point does
    /// not: its multiplier is inactive and stays 0).
    pub fn point_is_active(&self, j: usize) -> bool {
        self.point_active[j]
    }

    /// Arc length of each constraint point.
    pub fn point_arc_lengths(&self) -> Vec<f64> {
        (0..self.n_points())
            .map(|j| {
                let e = self.point_el[j];
                self.node_s[e] + self.point_xi[j] * self.elements[e].length
            })
            .collect()
    }

    /// The element means of a quantity given at the constraint points (for example the
    /// tensions `T_j`): `(T₀ + T₁)/2` over an element's Gauss points, the Simpson mean
    /// `(T_node + 4 T_mid + T_node')/6` for nodes and midpoints.
    pub fn element_means(&self, at_points: &[f64]) -> Vec<f64> {
        match self.options.constraint_points {
            ConstraintPoints::Gauss => (0..self.n_elements())
                .map(|e| 0.5 * (at_points[2 * e] + at_points[2 * e + 1]))
                .collect(),
            ConstraintPoints::NodesAndMidpoints => (0..self.n_elements())
                .map(|e| {
                    (at_points[2 * e] + 4.0 * at_points[2 * e + 1] + at_points[2 * e + 2]) / 6.0
                })
                .collect(),
        }
    }

    /// `x'` at every constraint point of a column-major configuration `x`.
    pub fn tangents_at_points(&self, x: &[f64], out: &mut [[f64; 3]]) {
        let n_s = self.n_scalar();
        for (j, o) in out.iter_mut().enumerate() {
            let e = self.point_el[j];
            let dn = &self.point_dn[j];
            for c in 0..DIM {
                let base = c * n_s + 2 * e;
                *o.get_mut(c).expect("3 components") =
                    (0..N_LOCAL).map(|a| dn[a] * x[base + a]).sum();
            }
        }
    }

    /// Adds `Σ_j g_j · N'(s_j) w_j` (the transpose of [`Beam::tangents_at_points`],
    /// weighted) into the column-major `out`.
    pub fn add_point_forces(&self, g: &[[f64; 3]], out: &mut [f64]) {
        let n_s = self.n_scalar();
        for (j, gj) in g.iter().enumerate() {
            let e = self.point_el[j];
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

    /// Refuses supports no inextensible beam can satisfy at time `t`: no prescribed position
    /// ([`BeamError::NoSupport`]), both ends prescribed at least `L` apart
    /// ([`BeamError::SupportsOutOfReach`]), or a prescribed end below the seabed
    /// ([`BeamError::EndBelowSeabed`]).
    pub fn check_supports(&self, t: f64) -> Result<(), BeamError> {
        if !self.has_support() {
            return Err(BeamError::NoSupport);
        }
        let (a, b) = (self.params.end_a.placement(), self.params.end_b.placement());
        if let (Some(pa), Some(pb)) = (a, b) {
            let span = dist(pa.at(t), pb.at(t));
            if span.is_nan() || span >= self.length() {
                return Err(BeamError::SupportsOutOfReach {
                    span,
                    length: self.length(),
                });
            }
        }
        if let Some(sb) = self.options.seabed {
            for (end, p) in [("end_a", a), ("end_b", b)] {
                if let Some(p) = p {
                    let height = p.at(t)[sb.axis];
                    if height < sb.level {
                        return Err(BeamError::EndBelowSeabed {
                            end,
                            height,
                            level: sb.level,
                        });
                    }
                }
            }
        }
        Ok(())
    }

    /// With [`ConstraintPoints::NodesAndMidpoints`], rescales every free nodal tangent of the
    /// column-major `x` to unit length: the exact projection onto the nodal constraints
    /// `|x'(sᵢ)| = 1` (a retraction). Newton iterates use it so that large rotations of the
    /// tangents do not leave them off the unit sphere (`|s + δs| > 1` after a linearized
    /// step). Does nothing for the Gauss points.
    pub fn normalize_nodal_tangents(&self, x: &mut [f64]) {
        if self.options.constraint_points != ConstraintPoints::NodesAndMidpoints {
            return;
        }
        let n_s = self.n_scalar();
        for i in 0..self.n_nodes() {
            let k = 2 * i + 1;
            if self.fixed[k] {
                continue;
            }
            let t = [x[k], x[n_s + k], x[2 * n_s + k]];
            let n = norm(t);
            if n > 0.0 && n.is_finite() {
                for c in 0..DIM {
                    x[c * n_s + k] /= n;
                }
            }
        }
    }

    /// Bending energy `½ EI ∫ |x''|²` of a column-major configuration (or of any column-major
    /// field, such as a velocity), element by element on `x` minus the linear field through the
    /// element's ends, which the element's bending matrix annihilates: position dofs 0, tangent
    /// dofs `x'_a − (x_b − x_a)/h`. So the sum has no round-off floor `ε EI |x|²/h³` per
    /// element; `½ xᵀKx` on the assembled `K` had one (0.29 J of 1.7·10⁴ J on the paper's
    /// cable at N = 10⁴, 384 J at N = 10⁵).
    pub fn bending_energy(&self, x: &[f64]) -> f64 {
        let n_s = self.n_scalar();
        let ei = self.params.bending_stiffness;
        let mut energy = 0.0;
        for (e, el) in self.elements.iter().enumerate() {
            let k = el.bending(ei);
            let h = el.length;
            for c in 0..DIM {
                let s = slopes_about_chord(&x[c * n_s + 2 * e..c * n_s + 2 * e + 4], h);
                let f = bending_force_about_chord(&k, s);
                energy += 0.5 * (s[0] * f[1] + s[1] * f[3]);
            }
        }
        energy
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

    /// Where `state` passes through itself, if it does: the arc lengths `(s₁, s₂)` of two
    /// points of the curve closer than `10⁻⁹ L` that are not neighbours along it, found on the
    /// polyline of `per_element` samples per element (two of its segments that share no
    /// sample). An inextensible beam cannot pass through itself, so such a shape — a loop
    /// Newton may converge to from some starts — is not a physical equilibrium.
    ///
    /// The segments are bucketed in a uniform grid of cells as large as the longest segment
    /// (a hash map of the occupied cells), so the search is linear in the number of samples
    /// for a curve that does not pile many segments into one cell.
    pub fn self_crossing(&self, state: &BeamState, per_element: usize) -> Option<(f64, f64)> {
        let samples = self.sample(state, per_element);
        let n_seg = samples.len().saturating_sub(1);
        if n_seg < 3 {
            return None;
        }
        let tol = 1e-9 * self.length();
        let seg = |i: usize| (samples[i].position, samples[i + 1].position);
        let cell = (0..n_seg)
            .map(|i| {
                let (a, b) = seg(i);
                dist(a, b)
            })
            .fold(tol, f64::max);
        if !cell.is_finite() {
            return None;
        }
        let index = |v: f64| (v / cell).floor() as i64;
        let mut grid: std::collections::HashMap<[i64; 3], Vec<usize>> =
            std::collections::HashMap::new();
        for i in 0..n_seg {
            let (a, b) = seg(i);
            let lo: [i64; 3] = std::array::from_fn(|c| index(a[c].min(b[c]) - tol));
            let hi: [i64; 3] = std::array::from_fn(|c| index(a[c].max(b[c]) + tol));
            for x in lo[0]..=hi[0] {
                for y in lo[1]..=hi[1] {
                    for z in lo[2]..=hi[2] {
                        grid.entry([x, y, z]).or_default().push(i);
                    }
                }
            }
        }
        let mut best: Option<(usize, usize)> = None;
        for list in grid.values() {
            for (k, &i) in list.iter().enumerate() {
                for &j in &list[k + 1..] {
                    let (i, j) = (i.min(j), i.max(j));
                    if j < i + 2 || best.is_some_and(|b| (i, j) >= b) {
                        continue;
                    }
                    let ((p0, p1), (q0, q1)) = (seg(i), seg(j));
                    if segment_distance(p0, p1, q0, q1) < tol {
                        best = Some((i, j));
                    }
                }
            }
        }
        best.map(|(i, j)| (samples[i].s, samples[j].s))
    }
}

/// The distance between the segments `[p0, p1]` and `[q0, q1]` (closest points clamped to
/// both segments; Ericson, *Real-Time Collision Detection*, 5.1.9).
fn segment_distance(p0: [f64; 3], p1: [f64; 3], q0: [f64; 3], q1: [f64; 3]) -> f64 {
    let (d1, d2, r) = (sub(p1, p0), sub(q1, q0), sub(p0, q0));
    let (a, e, f) = (dot(d1, d1), dot(d2, d2), dot(d2, r));
    let (mut s, mut t);
    if a <= f64::MIN_POSITIVE && e <= f64::MIN_POSITIVE {
        return norm(r);
    }
    if a <= f64::MIN_POSITIVE {
        s = 0.0;
        t = (f / e).clamp(0.0, 1.0);
    } else {
        let c = dot(d1, r);
        if e <= f64::MIN_POSITIVE {
            t = 0.0;
            s = (-c / a).clamp(0.0, 1.0);
        } else {
            let b = dot(d1, d2);
            let denom = a * e - b * b;
            s = if denom > 0.0 {
                ((b * f - c * e) / denom).clamp(0.0, 1.0)
            } else {
                0.0
            };
            t = (b * s + f) / e;
            if t < 0.0 {
                t = 0.0;
                s = (-c / a).clamp(0.0, 1.0);
            } else if t > 1.0 {
                t = 1.0;
                s = ((b - c) / a).clamp(0.0, 1.0);
            }
        }
    }
    norm(sub(add(p0, scale(d1, s)), add(q0, scale(d2, t))))
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
    pub fn straight(model: &Beam, origin: [f64; 3], direction: [f64; 3]) -> Self {
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
    pub fn arc(model: &Beam, a: [f64; 3], b: [f64; 3], bulge: [f64; 3]) -> Self {
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

    /// [`BeamState::arc`], refusing what it would silently degrade: supports at least `L`
    /// apart ([`BeamError::SupportsOutOfReach`]) and a bulge direction without a component
    /// normal to the chord `b − a` ([`BeamError::DegenerateSagDirection`], for example
    /// `[0, 0, 0]`, or a direction along the chord).
    pub fn try_arc(
        model: &Beam,
        a: [f64; 3],
        b: [f64; 3],
        bulge: [f64; 3],
    ) -> Result<Self, BeamError> {
        let l = model.length();
        let chord_v = sub(b, a);
        let c = norm(chord_v);
        if c.is_nan() || c >= l {
            return Err(BeamError::SupportsOutOfReach { span: c, length: l });
        }
        let normal = if c > 0.0 {
            let u = scale(chord_v, 1.0 / c);
            norm(sub(bulge, scale(u, dot(bulge, u))))
        } else {
            norm(bulge)
        };
        if !(normal > 1e-12 * norm(bulge) && normal.is_finite()) {
            return Err(BeamError::DegenerateSagDirection { direction: bulge });
        }
        Ok(Self::arc(model, a, b, bulge))
    }

    /// A taut start for a beam between `a` and `b` resting on the model's seabed: the polyline
    /// `a → a' → c → b` of length `L`, `a'` the foot of `a` on the seabed and `c` on the
    /// seabed between `a'` and the foot `b'` of `b`, at the distance `d` from `a'` with
    /// `|a a'| + d + |c b| = L`. Nodes are placed along it by arc length, tangents along its
    /// segments (unit; a node at a corner takes the outgoing segment).
    ///
    /// Refused: no seabed ([`BeamError::Unsupported`]), an end below it
    /// ([`BeamError::EndBelowSeabed`]), `L` too short to reach the seabed taut
    /// ([`BeamError::SupportsOutOfReach`] with `span` the shortest such polyline), or so long
    /// that even `d = |a'b'|` leaves slack (a slack cable on a frictionless seabed has no
    /// unique equilibrium; [`BeamError::SlackOnSeabed`]).
    pub fn taut_over_seabed(model: &Beam, a: [f64; 3], b: [f64; 3]) -> Result<Self, BeamError> {
        let Some(sb) = model.seabed() else {
            return Err(BeamError::Unsupported {
                what: "taut_over_seabed needs a model with a seabed",
            });
        };
        let (ha, hb) = (a[sb.axis] - sb.level, b[sb.axis] - sb.level);
        for (end, h, p) in [("end_a", ha, a), ("end_b", hb, b)] {
            if h < 0.0 {
                return Err(BeamError::EndBelowSeabed {
                    end,
                    height: p[sb.axis],
                    level: sb.level,
                });
            }
        }
        let mut fa = a;
        fa[sb.axis] = sb.level;
        let mut fb = b;
        fb[sb.axis] = sb.level;
        let dd = dist(fa, fb);
        let l = model.length();
        let f = |d: f64| ha + d + ((dd - d) * (dd - d) + hb * hb).sqrt();
        if f(0.0) > l {
            return Err(BeamError::SupportsOutOfReach {
                span: f(0.0),
                length: l,
            });
        }
        if f(dd) < l {
            return Err(BeamError::SlackOnSeabed { excess: l - f(dd) });
        }
        // f is nondecreasing in d: bisection.
        let (mut lo, mut hi) = (0.0, dd);
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            if f(mid) < l {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        let d = 0.5 * (lo + hi);
        let dir = if dd > 0.0 {
            scale(sub(fb, fa), 1.0 / dd)
        } else {
            [0.0; 3]
        };
        let c = add(fa, scale(dir, d));
        let corners = [a, fa, c, b];
        let mut seg_len = [0.0; 3];
        for k in 0..3 {
            seg_len[k] = dist(corners[k], corners[k + 1]);
        }
        let mut positions = Vec::with_capacity(model.n_nodes());
        let mut tangents = Vec::with_capacity(model.n_nodes());
        for &s in model.node_arc_lengths() {
            let mut rest = s;
            let mut k = 0;
            while k < 2 && (seg_len[k] == 0.0 || rest >= seg_len[k]) {
                rest -= seg_len[k];
                k += 1;
            }
            let t = if seg_len[k] > 0.0 {
                scale(sub(corners[k + 1], corners[k]), 1.0 / seg_len[k])
            } else {
                dir
            };
            positions.push(add(corners[k], scale(t, rest.min(seg_len[k]))));
            tangents.push(t);
        }
        Ok(Self {
            positions,
            tangents,
        })
    }

    /// The inextensible catenary with a grounded part, from `a` on the seabed to `b` above it:
    /// the shape of a cable (`EI = 0`) under uniform gravity `−|g| e_axis` on a frictionless
    /// seabed, a good start for a light beam too.
    ///
    /// With `X` the horizontal distance from `a` to `b`, `Y` the height of `b` above the
    /// seabed and `L_s` the suspended length, the suspended part is the catenary
    /// `y = c (cosh(ξ/c) − 1)` leaving the seabed tangentially at the touchdown point, so
    /// `L_s = c sinh(X_s/c)` and `Y = c (cosh(X_s/c) − 1)`, hence `L_s² = Y² + 2cY`, i.e.
    /// `c = (L_s² − Y²)/(2Y)`, and `X_s = c asinh(L_s/c)`; the grounded part is straight and
    /// taut (frictionless: constant tension `H = ρ|g| c`), of length `L − L_s`, so
    /// `L − L_s + c asinh(L_s/c) = X`, solved for `L_s ∈ (Y, L)` by bisection. The touchdown
    /// point lies at `L − L_s` from `a`.
    ///
    /// Refused: no seabed, gravity not along `−e_axis`, `a` not on the seabed or `b` below it,
    /// a cable too long ([`BeamError::SlackOnSeabed`]) or too short to touch the seabed
    /// ([`BeamError::Unsupported`]).
    pub fn catenary_over_seabed(model: &Beam, a: [f64; 3], b: [f64; 3]) -> Result<Self, BeamError> {
        let (l_s, c, u, l) = catenary_over_seabed_parameters(model, a, b)?;
        let sb = model.seabed().expect("checked above");
        let mut up = [0.0; 3];
        up[sb.axis] = 1.0;
        let x_t = l - l_s;
        let mut positions = Vec::with_capacity(model.n_nodes());
        let mut tangents = Vec::with_capacity(model.n_nodes());
        for &s in model.node_arc_lengths() {
            if s <= x_t {
                positions.push(add(a, scale(u, s)));
                tangents.push(u);
            } else {
                let q = (s - x_t) / c;
                let r = (1.0 + q * q).sqrt();
                positions.push(add(
                    a,
                    add(scale(u, x_t + c * q.asinh()), scale(up, c * (r - 1.0))),
                ));
                tangents.push(add(scale(u, 1.0 / r), scale(up, q / r)));
            }
        }
        Ok(Self {
            positions,
            tangents,
        })
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

/// `(L_s, c, u, L)` of [`BeamState::catenary_over_seabed`]: the suspended length, the
/// catenary parameter `c = H/(ρ|g|)`, the horizontal unit vector from `a` towards `b` and the
/// length.
pub fn catenary_over_seabed_parameters(
    model: &Beam,
    a: [f64; 3],
    b: [f64; 3],
) -> Result<(f64, f64, [f64; 3], f64), BeamError> {
    let Some(sb) = model.seabed() else {
        return Err(BeamError::Unsupported {
            what: "catenary_over_seabed needs a model with a seabed",
        });
    };
    let g = model.parameters().gravity;
    let gn = norm(g);
    if !(gn > 0.0 && (-g[sb.axis] - gn).abs() <= 1e-12 * gn) {
        return Err(BeamError::Unsupported {
            what: "catenary_over_seabed needs gravity along -e_axis of the seabed",
        });
    }
    let l = model.length();
    if (a[sb.axis] - sb.level).abs() > 1e-9 * l {
        return Err(BeamError::Unsupported {
            what: "catenary_over_seabed needs end a on the seabed",
        });
    }
    let y = b[sb.axis] - sb.level;
    if y <= 0.0 {
        return Err(BeamError::EndBelowSeabed {
            end: "end_b",
            height: b[sb.axis],
            level: sb.level,
        });
    }
    let mut h = sub(b, a);
    h[sb.axis] = 0.0;
    let x = norm(h);
    if x == 0.0 {
        return Err(BeamError::Unsupported {
            what: "catenary_over_seabed needs end b horizontally away from end a",
        });
    }
    let u = scale(h, 1.0 / x);
    let param = |ls: f64| (ls * ls - y * y) / (2.0 * y);
    let f = |ls: f64| {
        let c = param(ls);
        l - ls + c * (ls / c).asinh() - x
    };
    if l - y - x >= 0.0 {
        return Err(BeamError::SlackOnSeabed { excess: l - y - x });
    }
    if f(l) < 0.0 {
        return Err(BeamError::Unsupported {
            what: "the cable is too short to rest on the seabed (its catenary from end a to \
                   end b has no grounded part)",
        });
    }
    let (mut lo, mut hi) = (y * (1.0 + 1e-15), l);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if f(mid) < 0.0 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let ls = 0.5 * (lo + hi);
    Ok((ls, param(ls), u, l))
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

/// The tangent dofs of one component of an element, `z = [x_a, x'_a, x_b, x'_b]`, less the
/// chord slope `(x_b − x_a)/h`: `z` minus the linear field through the element's ends (whose
/// position dofs are then zero). The bending matrix annihilates linear fields, so `K_e z` and
/// `zᵀ K_e z` follow from these two numbers without the round-off floor `ε |K_e| |z|`
/// (`|K_e| ∝ EI/h³`).
#[inline(always)]
pub(crate) fn slopes_about_chord(z: &[f64], h: f64) -> [f64; 2] {
    let g = (z[2] - z[0]) / h;
    [z[1] - g, z[3] - g]
}

/// `K_e z` from [`slopes_about_chord`] `s`: `k[a][1] s₀ + k[a][3] s₁`.
#[inline(always)]
pub(crate) fn bending_force_about_chord(k: &[[f64; N_LOCAL]; N_LOCAL], s: [f64; 2]) -> [f64; 4] {
    std::array::from_fn(|a| k[a][1] * s[0] + k[a][3] * s[1])
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

pub(crate) fn check_state(model: &Beam, s: &BeamState) -> Result<(), BeamError> {
    let n = model.n_nodes();
    for (what, len) in [
        ("state positions", s.positions.len()),
        ("state tangents", s.tangents.len()),
    ] {
        if len != n {
            return Err(BeamError::BadState {
                what,
                found: len,
                expected: n,
            });
        }
    }
    if s.positions
        .iter()
        .chain(&s.tangents)
        .any(|v| !norm(*v).is_finite())
    {
        return Err(BeamError::NonFinite { step: 0 });
    }
    Ok(())
}
