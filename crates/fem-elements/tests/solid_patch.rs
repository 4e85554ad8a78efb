//! Patch tests of the total-Lagrangian kernels on distorted patches of every element kind, and
//! mass properties of meshed boxes (straight and rotated/translated).

use fem_elements::solid::shape::TET10_EDGES;
use fem_elements::solid::total_lagrangian::{
    cell_stress, internal_force, reference_geometry, strain_energy,
};
use fem_elements::solid::{CellRule, Material, MaterialModel, SolidKind, mass_properties};
use fem_mesh::generate::{BoxCells, box_mesh};

/// The box `[0,1]³` in `2×2×2` hexes (or 48 tets), interior nodes moved off the grid, so that
/// the elements are distorted. With `straight`, tet10 mid-edge nodes are put back at the
/// midpoints of the moved edges; otherwise the edges through interior nodes are curved.
fn distorted_patch(cells: BoxCells, straight: bool) -> (Vec<[f64; 3]>, Vec<usize>, SolidKind) {
    let mesh = box_mesh([1.0, 1.0, 1.0], [2, 2, 2], cells).unwrap();
    let kind = match cells {
        BoxCells::Hex8 => SolidKind::Hex8,
        BoxCells::Tet4 => SolidKind::Tet4,
        BoxCells::Tet10 => SolidKind::Tet10,
        BoxCells::Hex20 => SolidKind::Hex20,
        BoxCells::Hex27 => SolidKind::Hex27,
    };
    let mut points = mesh.points.clone();
    // Interior grid (corner) nodes move by up to 0.08, interior tet10 mid-edge nodes by 0.02.
    for (i, p) in points.iter_mut().enumerate() {
        if p.iter().all(|&c| c > 1e-12 && c < 1.0 - 1e-12) {
            let (s, amplitude) = (i as f64, if i < 27 { 1.0 } else { 0.25 });
            p[0] += amplitude * 0.08 * (1.3 * s).sin();
            p[1] += amplitude * 0.07 * (2.1 * s).cos();
            p[2] += amplitude * 0.06 * (0.7 * s + 0.4).sin();
        }
    }
    let conn = mesh.blocks[0].connectivity.clone();
    if straight && kind == SolidKind::Tet10 {
        for cell in conn.chunks_exact(10) {
            for (e, (a, b)) in TET10_EDGES.into_iter().enumerate() {
                let (pa, pb) = (points[cell[a]], points[cell[b]]);
                points[cell[4 + e]] = std::array::from_fn(|i| 0.5 * (pa[i] + pb[i]));
            }
        }
    }
    (points, conn, kind)
}

fn on_boundary(p: [f64; 3]) -> bool {
    p.iter()
        .any(|&c| c.abs() < 1e-12 || (c - 1.0).abs() < 1e-12)
}

/// An affine motion `x = (I + A) X + b`, i.e. `F = I + A` everywhere.
const A: [[f64; 3]; 3] = [[0.12, -0.05, 0.03], [0.04, -0.08, 0.06], [-0.02, 0.05, 0.1]];
const B: [f64; 3] = [0.3, -0.2, 0.1];

fn affine(p: [f64; 3]) -> [f64; 3] {
    std::array::from_fn(|i| (0..3).map(|j| A[i][j] * p[j]).sum::<f64>() + B[i])
}

#[test]
fn affine_motions_are_reproduced_exactly_by_every_element() {
    // Straight-sided patches with the force rules; a curved tet10 patch needs the 14-point rule
    // (∇₀N_a det J = cof(J)ᵀ ∇_ξ N_a is then of degree 3, beyond the 4-point rule's 2).
    for (cells, straight, rule) in [
        (BoxCells::Tet4, true, SolidKind::Tet4.force_rule()),
        (BoxCells::Hex8, true, SolidKind::Hex8.force_rule()),
        (BoxCells::Tet10, true, SolidKind::Tet10.force_rule()),
        (BoxCells::Tet10, false, SolidKind::Tet10.mass_rule()),
    ] {
        patch_test(cells, straight, &rule);
    }
}

#[test]
fn a_curved_tet10_patch_fails_with_the_4_point_rule() {
    // Why the curved patch above uses the 14-point rule: with 4 points, the interior forces of
    // the same affine motion are far from round-off.
    let (points, conn, kind) = distorted_patch(BoxCells::Tet10, false);
    let rule = kind.force_rule();
    let m = Material::new(MaterialModel::NeoHookean, 1.0e3, 0.3).unwrap();
    let mut global = vec![0.0; 3 * points.len()];
    let (mut grad, mut dv) = (vec![0.0; 3 * 10 * 4], vec![0.0; 4]);
    let (mut u, mut fe) = (vec![0.0; 30], vec![0.0; 30]);
    for cell in conn.chunks_exact(10) {
        let x: Vec<[f64; 3]> = cell.iter().map(|&a| points[a]).collect();
        reference_geometry(kind, &rule, &x, &mut grad, &mut dv).unwrap();
        for (a, xa) in x.iter().enumerate() {
            u[3 * a..3 * a + 3].copy_from_slice(&affine(*xa));
        }
        internal_force(&m, &grad, &dv, &u, &mut fe);
        for (a, &node) in cell.iter().enumerate() {
            for i in 0..3 {
                global[3 * node + i] += fe[3 * a + i];
            }
        }
    }
    let worst = points
        .iter()
        .enumerate()
        .filter(|(_, p)| !on_boundary(**p))
        .flat_map(|(node, _)| global[3 * node..3 * node + 3].to_vec())
        .fold(0.0f64, |a, v| a.max(v.abs()));
    assert!(worst > 1e-4, "{worst:e}");
}

fn patch_test(cells: BoxCells, straight: bool, rule: &CellRule) {
    let f: [[f64; 3]; 3] =
        std::array::from_fn(|i| std::array::from_fn(|j| A[i][j] + if i == j { 1.0 } else { 0.0 }));
    {
        let (points, conn, kind) = distorted_patch(cells, straight);
        let n = kind.n_nodes();
        let nq = rule.n_points();
        for model in [
            MaterialModel::SaintVenantKirchhoff,
            MaterialModel::NeoHookean,
            MaterialModel::NeoHookeanLog,
        ] {
            let m = Material::new(model, 1.0e3, 0.3).unwrap();
            // Expected: P(F) constant, Cauchy σ = P Fᵀ / J, energy W(F) |Ω|.
            let (p, j) = m.first_piola(&f);
            let sigma = |x: usize, y: usize| (0..3).map(|k| p[x][k] * f[y][k]).sum::<f64>() / j;
            let want = [
                sigma(0, 0),
                sigma(1, 1),
                sigma(2, 2),
                sigma(0, 1),
                sigma(1, 2),
                sigma(0, 2),
            ];
            let pscale = p.iter().flatten().fold(0.0f64, |a, v| a.max(v.abs()));
            let mut global = vec![0.0; 3 * points.len()];
            let mut energy = 0.0;
            let mut volume = 0.0;
            let (mut grad, mut dv) = (vec![0.0; 3 * n * nq], vec![0.0; nq]);
            let (mut u, mut fe) = (vec![0.0; 3 * n], vec![0.0; 3 * n]);
            for cell in conn.chunks_exact(n) {
                let x: Vec<[f64; 3]> = cell.iter().map(|&a| points[a]).collect();
                reference_geometry(kind, rule, &x, &mut grad, &mut dv).unwrap();
                for (a, xa) in x.iter().enumerate() {
                    u[3 * a..3 * a + 3].copy_from_slice(&affine(*xa));
                }
                let jmin = internal_force(&m, &grad, &dv, &u, &mut fe);
                assert!((jmin - j).abs() < 1e-13);
                for (a, &node) in cell.iter().enumerate() {
                    for i in 0..3 {
                        global[3 * node + i] += fe[3 * a + i];
                    }
                }
                energy += strain_energy(&m, &grad, &dv, &u);
                volume += dv.iter().sum::<f64>();
                let out = cell_stress(&m, &grad, &dv, &u);
                for c in 0..6 {
                    assert!(
                        (out.cauchy[c] - want[c]).abs() < 1e-12 * pscale,
                        "{kind} {model} σ{c}"
                    );
                }
                assert!((out.energy_density - m.energy(&f)).abs() < 1e-12 * pscale);
            }
            assert!((volume - 1.0).abs() < 1e-13, "{kind}: {volume}");
            assert!((energy - m.energy(&f)).abs() < 1e-12 * pscale);
            // Interior nodes are in equilibrium: f = 0 to round-off.
            let mut interior = 0;
            let mut largest_boundary: f64 = 0.0;
            for (node, &p) in points.iter().enumerate() {
                let fa = &global[3 * node..3 * node + 3];
                if on_boundary(p) {
                    largest_boundary =
                        largest_boundary.max(fa.iter().fold(0.0, |a, v| a.max(v.abs())));
                } else {
                    interior += 1;
                    for v in fa {
                        assert!(
                            v.abs() < 1e-12 * pscale,
                            "{kind} {model} node {node}: {v:e}"
                        );
                    }
                }
            }
            assert!(
                interior >= 1 && largest_boundary > 1e-3 * pscale,
                "{kind}: the patch has no load"
            );
            // Boundary forces do the work of the constant stress: Σ f·v = P : ∇v |Ω| for v = G X.
            let g = [[0.3, 0.1, -0.2], [0.0, 0.5, 0.2], [0.4, -0.1, 0.1]];
            let work: f64 = points
                .iter()
                .enumerate()
                .map(|(node, x)| {
                    (0..3)
                        .map(|i| global[3 * node + i] * (0..3).map(|k| g[i][k] * x[k]).sum::<f64>())
                        .sum::<f64>()
                })
                .sum();
            let expected: f64 = (0..3)
                .flat_map(|i| (0..3).map(move |k| (i, k)))
                .map(|(i, k)| p[i][k] * g[i][k])
                .sum();
            assert!(
                (work - expected).abs() < 1e-12 * pscale,
                "{kind} {model}: {work} vs {expected}"
            );
        }
    }
}

/// `V`, `c`, `I_c` of the box `[0,a]×[0,b]×[0,c]` for density `ρ`.
fn box_properties(l: [f64; 3], rho: f64) -> (f64, [f64; 3], [f64; 3]) {
    let v = l[0] * l[1] * l[2];
    let m = rho * v;
    let i = [
        m * (l[1] * l[1] + l[2] * l[2]) / 12.0,
        m * (l[0] * l[0] + l[2] * l[2]) / 12.0,
        m * (l[0] * l[0] + l[1] * l[1]) / 12.0,
    ];
    (v, l.map(|x| 0.5 * x), i)
}

#[test]
fn mass_properties_of_a_box_are_exact() {
    let l = [2.0, 0.5, 1.5];
    let rho = 7800.0;
    let (v, c, i) = box_properties(l, rho);
    for cells in [
        BoxCells::Hex8,
        BoxCells::Tet4,
        BoxCells::Tet10,
        BoxCells::Hex20,
        BoxCells::Hex27,
    ] {
        let mesh = box_mesh(l, [3, 2, 4], cells).unwrap();
        let kind = match cells {
            BoxCells::Hex8 => SolidKind::Hex8,
            BoxCells::Tet4 => SolidKind::Tet4,
            BoxCells::Tet10 => SolidKind::Tet10,
            BoxCells::Hex20 => SolidKind::Hex20,
            BoxCells::Hex27 => SolidKind::Hex27,
        };
        let p = mass_properties(kind, &mesh.points, &mesh.blocks[0].connectivity, rho).unwrap();
        assert!((p.volume - v).abs() < 1e-13 * v, "{kind} {} {v}", p.volume);
        assert!((p.mass - rho * v).abs() < 1e-13 * rho * v);
        for a in 0..3 {
            assert!((p.center[a] - c[a]).abs() < 1e-13, "{kind} c{a}");
            for b in 0..3 {
                let want = if a == b { i[a] } else { 0.0 };
                assert!(
                    (p.inertia[a][b] - want).abs() < 1e-12 * i[0],
                    "{kind} I{a}{b}: {}",
                    p.inertia[a][b]
                );
            }
        }
    }
}

#[test]
fn mass_properties_follow_a_rigid_motion() {
    // The same box rotated by R and moved far away: c' = R c + t, I' = R I Rᵀ.
    let l = [2.0, 0.5, 1.5];
    let rho = 2.0;
    let (v, c, i) = box_properties(l, rho);
    let (ca, sa) = (0.7f64.cos(), 0.7f64.sin());
    let (cb, sb) = (-0.4f64.cos(), (-0.4f64).sin());
    let rz = [[ca, -sa, 0.0], [sa, ca, 0.0], [0.0, 0.0, 1.0]];
    let rx = [[1.0, 0.0, 0.0], [0.0, cb, -sb], [0.0, sb, cb]];
    let r: [[f64; 3]; 3] =
        std::array::from_fn(|a| std::array::from_fn(|b| (0..3).map(|k| rz[a][k] * rx[k][b]).sum()));
    let t = [1.0e3, -250.0, 40.0];
    let moved = |p: [f64; 3]| -> [f64; 3] {
        std::array::from_fn(|a| (0..3).map(|k| r[a][k] * p[k]).sum::<f64>() + t[a])
    };
    for (cells, kind) in [
        (BoxCells::Hex8, SolidKind::Hex8),
        (BoxCells::Tet4, SolidKind::Tet4),
        (BoxCells::Tet10, SolidKind::Tet10),
    ] {
        let mesh = box_mesh(l, [2, 2, 3], cells).unwrap();
        let points: Vec<[f64; 3]> = mesh.points.iter().map(|&p| moved(p)).collect();
        let p = mass_properties(kind, &points, &mesh.blocks[0].connectivity, rho).unwrap();
        assert!((p.volume - v).abs() < 1e-13 * v, "{kind}");
        let want_c = moved(c);
        for a in 0..3 {
            assert!(
                (p.center[a] - want_c[a]).abs() < 1e-12 * t[0],
                "{kind} c{a}"
            );
            for b in 0..3 {
                let want: f64 = (0..3).map(|k| r[a][k] * i[k] * r[b][k]).sum();
                // Second moments are taken about the centre: no cancellation from |t| ~ 1e3.
                assert!(
                    (p.inertia[a][b] - want).abs() < 1e-12 * i[0],
                    "{kind} I{a}{b}: {} vs {want}",
                    p.inertia[a][b]
                );
            }
        }
    }
}
