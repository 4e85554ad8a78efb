//! Static convergence of the total-Lagrangian solid to a manufactured solution (issue 10).
//!
//! The exact displacement on the unit cube is `u_i(X) = a sin(k_i · X + φ_i)` (three different
//! wave vectors, `a = 0.02`: Green–Lagrange strains up to ≈ 0.1, so the problem is geometrically
//! nonlinear). Its body force per unit reference volume is derived from the **full** nonlinear
//! equilibrium of the chosen material, `Div P(F) + b₀ = 0`, with `F = I + ∇u`:
//!
//! ```text
//! b₀_i = −∂P_iJ/∂X_J = −A_iJkL(F) ∂²u_k/∂X_L∂X_J,   A_iJkL = δ_ik S_JL + F_iM 𝒞_MJNL F_kN
//! ```
//!
//! where `S` and `𝒞 = ∂S/∂E` are the material's own (`Material::pk2_and_tangent`), so the body
//! force is exact to round-off for any hyperelastic model. The exact displacement is prescribed
//! at every boundary node (non-homogeneous Dirichlet), the nodal body forces are integrated with
//! a degree-5 tetrahedron rule or 4×4×4 Gauss, and the discrete equilibrium
//! `f_int(u) = f_ext` is solved by Newton's method with the consistent tangent of
//! [`SolidOperator::tangent_values`] and a [`Factorization`] (symbolic analysis once, numeric
//! refactorization every iteration) to a residual of 1e-11 of the load.
//!
//! The relative L2 error `‖u_h − u‖ / ‖u‖` (same quadrature) must fall at order 2 for tet4 and
//! hex8 (every formulation: `full`, `eas`, `fbar`, `one_point`) and at order 3 for tet10, hex20
//! and hex27, within 0.15 on the last refinement. The error table is in
//! `docs/validation.md`, "Solid statics: manufactured solution — issue 10"; run with
//! `--nocapture` to print it.

use fem_assembly::{DofMap, Factorization, SolidOperator, Symmetry};
use fem_elements::solid::quadrature3d::{hex_gauss, tet_14point};
use fem_elements::solid::shape::MAX_NODES;
use fem_elements::solid::{CellRule, Formulation, Material, MaterialModel, SolidKind};
use fem_mesh::generate::{BoxCells, box_mesh};

/// Amplitude of the manufactured displacement.
const AMPLITUDE: f64 = 0.02;
/// Wave vectors `k_i` of the three components.
const WAVE: [[f64; 3]; 3] = [[2.6, 1.2, 1.8], [1.0, 2.8, 1.6], [1.8, 0.8, 2.4]];
/// Phases `φ_i`.
const PHASE: [f64; 3] = [0.3, 0.7, 1.1];

/// Exact displacement.
fn exact(x: [f64; 3]) -> [f64; 3] {
    std::array::from_fn(|i| AMPLITUDE * (dot(WAVE[i], x) + PHASE[i]).sin())
}

fn dot(a: [f64; 3], b: [f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

/// Voigt index of the symmetric pair `(i, j)` in the order `11, 22, 33, 23, 13, 12`.
fn voigt(i: usize, j: usize) -> usize {
    match (i.min(j), i.max(j)) {
        (0, 0) => 0,
        (1, 1) => 1,
        (2, 2) => 2,
        (1, 2) => 3,
        (0, 2) => 4,
        _ => 5,
    }
}

/// Body force `b₀ = −Div P` of the exact displacement at `x` (see the module docs).
fn body_force(material: &Material, x: [f64; 3]) -> [f64; 3] {
    // ∇u and the second derivatives ∂²u_k/∂X_L∂X_J = −a sin(·) k_L k_J.
    let mut f = [[0.0; 3]; 3];
    let mut second = [0.0; 3];
    for k in 0..3 {
        let arg = dot(WAVE[k], x) + PHASE[k];
        for l in 0..3 {
            f[k][l] = AMPLITUDE * arg.cos() * WAVE[k][l] + if k == l { 1.0 } else { 0.0 };
        }
        second[k] = -AMPLITUDE * arg.sin();
    }
    let (s, d) = material.pk2_and_tangent(&f);
    let s_at = |i: usize, j: usize| s[voigt(i, j)];
    let c_at = |i: usize, j: usize, k: usize, l: usize| d[voigt(i, j)][voigt(k, l)];
    let mut b = [0.0; 3];
    for i in 0..3 {
        for j in 0..3 {
            for k in 0..3 {
                for l in 0..3 {
                    // A_iJkL
                    let mut a = if i == k { s_at(j, l) } else { 0.0 };
                    for m in 0..3 {
                        for n in 0..3 {
                            a += f[i][m] * c_at(m, j, n, l) * f[k][n];
                        }
                    }
                    b[i] -= a * second[k] * WAVE[k][l] * WAVE[k][j];
                }
            }
        }
    }
    b
}

/// Physical point and `det J` of reference point `xi` of a cell with nodes `x`; shape values
/// into `n`.
fn map_point(kind: SolidKind, x: &[[f64; 3]], xi: [f64; 3], n: &mut [f64]) -> ([f64; 3], f64) {
    let nn = kind.n_nodes();
    let mut g = [[0.0; 3]; MAX_NODES];
    kind.values_into(xi, &mut n[..nn]);
    kind.gradients_into(xi, &mut g[..nn]);
    let mut p = [0.0; 3];
    let mut jac = [[0.0; 3]; 3];
    for a in 0..nn {
        for i in 0..3 {
            p[i] += n[a] * x[a][i];
            for j in 0..3 {
                jac[i][j] += x[a][i] * g[a][j];
            }
        }
    }
    let det = jac[0][0] * (jac[1][1] * jac[2][2] - jac[1][2] * jac[2][1])
        - jac[0][1] * (jac[1][0] * jac[2][2] - jac[1][2] * jac[2][0])
        + jac[0][2] * (jac[1][0] * jac[2][1] - jac[1][1] * jac[2][0]);
    (p, det)
}

/// The rule for loads and errors: degree 5 on tetrahedra, 4×4×4 Gauss on hexahedra.
fn accurate_rule(kind: SolidKind) -> CellRule {
    if kind.is_hexahedron() {
        hex_gauss(4).expect("rule")
    } else {
        tet_14point()
    }
}

/// The outcome of one refinement level.
struct Level {
    n: usize,
    dofs: usize,
    newton_iterations: usize,
    /// `‖f_int(u₀) − f_ext‖ / ‖f_ext‖` at the start of Newton.
    initial_residual: f64,
    relative_l2: f64,
}

/// Solves the manufactured problem on the `n³` box of `cells` and measures the L2 error.
fn solve_level(
    cells: BoxCells,
    kind: SolidKind,
    formulation: Formulation,
    model: MaterialModel,
    n: usize,
) -> Level {
    let mesh = box_mesh([1.0; 3], [n; 3], cells).expect("box");
    let material = Material::new(model, 1.0, 0.3).expect("valid material");
    let mut boundary: Vec<usize> = ["xmin", "xmax", "ymin", "ymax", "zmin", "zmax"]
        .iter()
        .flat_map(|g| mesh.group(g).expect("face group").nodes.iter().copied())
        .collect();
    boundary.sort_unstable();
    boundary.dedup();
    let fixed: Vec<usize> = boundary
        .iter()
        .flat_map(|&a| [3 * a, 3 * a + 1, 3 * a + 2])
        .collect();
    let dofmap = DofMap::with_fixed(mesh.n_nodes(), 3, fixed);
    let connectivity = &mesh.blocks[0].connectivity;
    let body = SolidOperator::with_formulations(
        kind,
        &mesh.points,
        connectivity,
        &vec![formulation; connectivity.len() / kind.n_nodes()],
        material,
        1.0,
        kind.default_lumping(),
        &dofmap,
    )
    .expect("valid mesh");

    // Consistent nodal body forces.
    let nn = kind.n_nodes();
    let rule = accurate_rule(kind);
    let mut f_ext = vec![0.0; dofmap.n_free()];
    let mut shape = [0.0; MAX_NODES];
    for cell in connectivity.chunks_exact(nn) {
        let x: Vec<[f64; 3]> = cell.iter().map(|&a| mesh.points[a]).collect();
        for (xi, w) in rule.points.iter().zip(&rule.weights) {
            let (p, det) = map_point(kind, &x, *xi, &mut shape);
            let b = body_force(&material, p);
            for (a, &node) in cell.iter().enumerate() {
                for i in 0..3 {
                    if let Some(r) = dofmap.free(3 * node + i) {
                        f_ext[r] += w * det * shape[a] * b[i];
                    }
                }
            }
        }
    }

    // Newton from the nodal interpolant of the exact displacement (which holds the boundary
    // values). From u = 0 inside, the jump to the boundary values compresses the boundary layer
    // by strains ≈ a / h ≈ 0.3 on the finest meshes, where SVK's tangent is indefinite (the
    // material loses ellipticity in compression); the Neo-Hookean solve converges from zero too.
    let mut u: Vec<f64> = mesh.points.iter().flat_map(|&p| exact(p)).collect();
    let load_norm = f_ext.iter().map(|v| v * v).sum::<f64>().sqrt();
    let mut tangent = body.tangent(&u).expect("not inverted");
    let mut factor: Option<Factorization> = None;
    let (mut slots, mut scratch) = (Vec::new(), Vec::new());
    let mut residual = vec![0.0; dofmap.n_free()];
    let mut newton_iterations = 0;
    let mut initial_residual = None;
    loop {
        body.internal_force(&u, &mut slots, &mut residual)
            .expect("not inverted");
        for (r, f) in residual.iter_mut().zip(&f_ext) {
            *r -= f;
        }
        let norm = residual.iter().map(|v| v * v).sum::<f64>().sqrt();
        initial_residual.get_or_insert(norm / load_norm);
        if norm <= 1e-11 * load_norm {
            break;
        }
        assert!(
            newton_iterations < 12,
            "{kind} n = {n}: Newton did not converge (residual {norm:e} of load {load_norm:e})"
        );
        if newton_iterations > 0 {
            body.tangent_values(&u, &mut scratch, tangent.values_mut())
                .expect("not inverted");
        }
        match factor.as_mut() {
            None => factor = Some(Factorization::new(&tangent, Symmetry::Symmetric).expect("SPD")),
            Some(chol) => chol.refactor(&tangent).expect("SPD"),
        }
        factor
            .as_ref()
            .expect("factored")
            .solve_in_place(&mut residual);
        for (&dof, du) in dofmap.free_dofs().iter().zip(&residual) {
            u[dof] -= du;
        }
        newton_iterations += 1;
    }

    // Relative L2 error of the displacement field.
    let (mut err2, mut ref2) = (0.0, 0.0);
    for cell in connectivity.chunks_exact(nn) {
        let x: Vec<[f64; 3]> = cell.iter().map(|&a| mesh.points[a]).collect();
        for (xi, w) in rule.points.iter().zip(&rule.weights) {
            let (p, det) = map_point(kind, &x, *xi, &mut shape);
            let ue = exact(p);
            for i in 0..3 {
                let uh: f64 = cell
                    .iter()
                    .enumerate()
                    .map(|(a, &node)| shape[a] * u[3 * node + i])
                    .sum();
                err2 += w * det * (uh - ue[i]).powi(2);
                ref2 += w * det * ue[i].powi(2);
            }
        }
    }
    Level {
        n,
        dofs: dofmap.n_free(),
        newton_iterations,
        initial_residual: initial_residual.expect("evaluated once"),
        relative_l2: (err2 / ref2).sqrt(),
    }
}

/// Solves on the given refinements, prints the table and checks the order of the last halving.
fn check_order(
    cells: BoxCells,
    kind: SolidKind,
    model: MaterialModel,
    ns: &[usize],
    expected: f64,
) {
    check_order_of(cells, kind, Formulation::Full, model, ns, expected);
}

/// [`check_order`] for a formulation.
fn check_order_of(
    cells: BoxCells,
    kind: SolidKind,
    formulation: Formulation,
    model: MaterialModel,
    ns: &[usize],
    expected: f64,
) {
    let levels: Vec<Level> = ns
        .iter()
        .map(|&n| solve_level(cells, kind, formulation, model, n))
        .collect();
    println!(
        "{kind} {formulation}, {model}: n, free dofs, initial residual, Newton iterations, relative L2 error, order"
    );
    let mut orders = Vec::new();
    for (i, l) in levels.iter().enumerate() {
        let order = (i > 0).then(|| {
            let prev = &levels[i - 1];
            (prev.relative_l2 / l.relative_l2).ln() / (l.n as f64 / prev.n as f64).ln()
        });
        println!(
            "| {kind} {formulation} | {model} | {} | {} | {:.1e} | {} | {:.3e} | {} |",
            l.n,
            l.dofs,
            l.initial_residual,
            l.newton_iterations,
            l.relative_l2,
            order.map_or("–".to_string(), |o| format!("{o:.3}"))
        );
        orders.extend(order);
    }
    let last = *orders.last().expect("at least two levels");
    assert!(
        (last - expected).abs() <= 0.15,
        "{kind} {model}: observed order {last:.3} on the last refinement, expected {expected} ± 0.15 (all: {orders:?})"
    );
    for o in &orders {
        assert!(
            (o - expected).abs() <= 0.3,
            "{kind} {model}: observed orders {orders:?}, expected {expected}"
        );
    }
}

#[test]
fn tet4_svk_converges_at_order_two() {
    // (The box generator's tet4 split has 24 tetrahedra per hexahedron.)
    check_order(
        BoxCells::Tet4,
        SolidKind::Tet4,
        MaterialModel::SaintVenantKirchhoff,
        &[2, 4, 8],
        2.0,
    );
}

#[test]
fn hex8_eas_svk_converges_at_order_two() {
    check_order_of(
        BoxCells::Hex8,
        SolidKind::Hex8,
        Formulation::Eas,
        MaterialModel::SaintVenantKirchhoff,
        &[4, 8, 16],
        2.0,
    );
}

#[test]
fn hex8_fbar_neo_hookean_converges_at_order_two() {
    check_order_of(
        BoxCells::Hex8,
        SolidKind::Hex8,
        Formulation::FBar,
        MaterialModel::NeoHookean,
        &[4, 8, 16],
        2.0,
    );
}

#[test]
fn hex8_one_point_neo_hookean_converges_at_order_two() {
    check_order_of(
        BoxCells::Hex8,
        SolidKind::Hex8,
        Formulation::OnePoint,
        MaterialModel::NeoHookean,
        &[4, 8, 16],
        2.0,
    );
}

#[test]
fn hex20_svk_converges_at_order_three() {
    check_order(
        BoxCells::Hex20,
        SolidKind::Hex20,
        MaterialModel::SaintVenantKirchhoff,
        &[2, 4, 8],
        3.0,
    );
}

#[test]
fn hex27_neo_hookean_converges_at_order_three() {
    check_order(
        BoxCells::Hex27,
        SolidKind::Hex27,
        MaterialModel::NeoHookean,
        &[2, 4, 8],
        3.0,
    );
}

#[test]
fn hex8_svk_converges_at_order_two() {
    check_order(
        BoxCells::Hex8,
        SolidKind::Hex8,
        MaterialModel::SaintVenantKirchhoff,
        &[4, 8, 16],
        2.0,
    );
}

#[test]
fn tet10_svk_converges_at_order_three() {
    check_order(
        BoxCells::Tet10,
        SolidKind::Tet10,
        MaterialModel::SaintVenantKirchhoff,
        &[2, 4, 8],
        3.0,
    );
}

#[test]
fn hex8_neo_hookean_converges_at_order_two() {
    check_order(
        BoxCells::Hex8,
        SolidKind::Hex8,
        MaterialModel::NeoHookean,
        &[4, 8, 16],
        2.0,
    );
}

#[test]
fn tet10_neo_hookean_converges_at_order_three() {
    check_order(
        BoxCells::Tet10,
        SolidKind::Tet10,
        MaterialModel::NeoHookean,
        &[2, 4, 8],
        3.0,
    );
}
