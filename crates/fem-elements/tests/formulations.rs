//! Every element formulation (`full`, `eas`, `fbar`, `one_point`) on every kind it applies to:
//! the force is the gradient of the strain energy and the tangent the Jacobian of the force
//! (central differences, element by element), rigid motions carry no force or energy, the
//! patch test holds on distorted meshes, and the closed forms each formulation promises.

use fem_elements::solid::element::{Element, Formulation, gather};
use fem_elements::solid::material::{Hyperelastic, Mat3, mat_mul};
use fem_elements::solid::one_point;
use fem_elements::solid::shape::{HEX20_EDGES, HEX27_FACES, TET10_EDGES};
use fem_elements::solid::{Material, MaterialModel, SolidKind};
use fem_mesh::generate::{BoxCells, box_mesh};

const MODELS: [MaterialModel; 3] = [
    MaterialModel::SaintVenantKirchhoff,
    MaterialModel::NeoHookean,
    MaterialModel::NeoHookeanLog,
];

/// Every (kind, formulation) pair that applies.
fn elements() -> Vec<Element> {
    let mut out = Vec::new();
    for formulation in Formulation::ALL {
        for &kind in formulation.kinds() {
            out.push(Element::new(kind, formulation).unwrap());
        }
    }
    out
}

/// A distorted cell of `kind` (second-order nodes moved off the straight positions a little).
fn cell(kind: SolidKind) -> Vec<[f64; 3]> {
    let mut x: Vec<[f64; 3]> = kind.reference_nodes().to_vec();
    for (a, p) in x.iter_mut().enumerate() {
        let s = a as f64;
        *p = [
            1.1 * p[0] + 0.1 * p[1] + 0.03 * (s * 1.7).sin(),
            0.9 * p[1] - 0.05 * p[2] + 0.03 * (s * 2.3).cos(),
            p[2] + 0.1 * p[0] + 0.02 * (s * 0.7).sin(),
        ];
    }
    if kind == SolidKind::Tet10 {
        for (e, &(a, b)) in TET10_EDGES.iter().enumerate() {
            x[4 + e] = std::array::from_fn(|i| 0.5 * (x[a][i] + x[b][i]));
        }
    }
    x
}

fn displacement(n: usize, amplitude: f64) -> Vec<f64> {
    (0..3 * n)
        .map(|i| amplitude * ((i as f64) * 0.73 + 0.2).sin())
        .collect()
}

fn geometry(element: &Element, material: &dyn Hyperelastic, x: &[[f64; 3]]) -> Vec<f64> {
    let mut geo = vec![0.0; element.geometry_len()];
    element.geometry(material, x, &mut geo).unwrap();
    geo
}

fn energy(element: &Element, m: &Material, geo: &[f64], u: &[f64]) -> f64 {
    element.strain_energy(m, geo, u).unwrap().0
}

#[test]
fn force_is_the_energy_gradient_and_tangent_the_force_jacobian() {
    for element in elements() {
        let n = element.n_nodes();
        let x = cell(element.kind());
        for model in MODELS {
            let m = Material::new(model, 100.0, 0.3).unwrap();
            let geo = geometry(&element, &m, &x);
            let u = displacement(n, 0.04);
            let mut f = vec![0.0; 3 * n];
            let mut k = vec![0.0; 9 * n * n];
            assert_eq!(element.force(&m, &geo, &u, &mut f), None, "{element}");
            assert_eq!(element.tangent(&m, &geo, &u, &mut k), None, "{element}");
            let fscale = f.iter().fold(0.0f64, |a, v| a.max(v.abs()));
            let kscale = k.iter().fold(0.0f64, |a, v| a.max(v.abs()));
            assert!(fscale > 0.1, "{element} {model}: a strained cell");
            let h = 1e-6;
            let (mut fp, mut fm) = (vec![0.0; 3 * n], vec![0.0; 3 * n]);
            for d in 0..3 * n {
                let (mut up, mut um) = (u.clone(), u.clone());
                up[d] += h;
                um[d] -= h;
                let de =
                    (energy(&element, &m, &geo, &up) - energy(&element, &m, &geo, &um)) / (2.0 * h);
                assert!(
                    (de - f[d]).abs() < 1e-7 * fscale,
                    "{element} {model} dof {d}: {de} vs {}",
                    f[d]
                );
                element.force(&m, &geo, &up, &mut fp);
                element.force(&m, &geo, &um, &mut fm);
                for r in 0..3 * n {
                    let fd = (fp[r] - fm[r]) / (2.0 * h);
                    assert!(
                        (fd - k[r * 3 * n + d]).abs() < 1e-6 * kscale,
                        "{element} {model} K[{r}][{d}]: {fd} vs {}",
                        k[r * 3 * n + d]
                    );
                }
            }
            for r in 0..3 * n {
                for c in 0..3 * n {
                    assert!(
                        (k[r * 3 * n + c] - k[c * 3 * n + r]).abs() < 1e-10 * kscale,
                        "{element} {model}: K not symmetric at {r} {c}"
                    );
                }
            }
        }
    }
}

/// `R` about the axis `(1, 2, 2)/3` by `angle`.
fn rotation(angle: f64) -> Mat3 {
    let a = [1.0 / 3.0, 2.0 / 3.0, 2.0 / 3.0];
    let (c, s) = (angle.cos(), angle.sin());
    std::array::from_fn(|i| {
        std::array::from_fn(|j| {
            let cross = [[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]];
            c * if i == j { 1.0 } else { 0.0 } + s * cross[i][j] + (1.0 - c) * a[i] * a[j]
        })
    })
}

#[test]
fn rigid_motions_carry_no_force_and_rotations_change_no_energy() {
    for element in elements() {
        let n = element.n_nodes();
        let x = cell(element.kind());
        let m = Material::new(MaterialModel::NeoHookean, 100.0, 0.3).unwrap();
        let geo = geometry(&element, &m, &x);
        // u = (R − I) X + b: zero force and energy.
        let r = rotation(1.1);
        let rigid: Vec<f64> = x
            .iter()
            .flat_map(|p| {
                (0..3).map(move |i| (0..3).map(|j| r[i][j] * p[j]).sum::<f64>() - p[i] + 0.3)
            })
            .collect();
        let mut f = vec![0.0; 3 * n];
        assert_eq!(element.force(&m, &geo, &rigid, &mut f), None);
        assert!(f.iter().all(|v| v.abs() < 1e-11), "{element}: {f:?}");
        assert!(
            energy(&element, &m, &geo, &rigid).abs() < 1e-11,
            "{element}"
        );
        // A rotation superposed on a strained state: the same energy, forces rotated.
        let u = displacement(n, 0.05);
        let (e0, mut f0) = (energy(&element, &m, &geo, &u), vec![0.0; 3 * n]);
        element.force(&m, &geo, &u, &mut f0);
        let mut rotated = vec![0.0; 3 * n];
        for a in 0..n {
            let xa: [f64; 3] = std::array::from_fn(|i| x[a][i] + u[3 * a + i]);
            for i in 0..3 {
                rotated[3 * a + i] = (0..3).map(|j| r[i][j] * xa[j]).sum::<f64>() - x[a][i];
            }
        }
        let e1 = energy(&element, &m, &geo, &rotated);
        assert!(
            (e1 - e0).abs() < 1e-12 * e0.abs().max(1.0),
            "{element}: {e1} vs {e0}"
        );
        let mut f1 = vec![0.0; 3 * n];
        element.force(&m, &geo, &rotated, &mut f1);
        let scale = f0.iter().fold(0.0f64, |a, v| a.max(v.abs()));
        for a in 0..n {
            for i in 0..3 {
                let want: f64 = (0..3).map(|j| r[i][j] * f0[3 * a + j]).sum();
                assert!((f1[3 * a + i] - want).abs() < 1e-11 * scale, "{element}");
            }
        }
    }
}

/// The box `[0,1]³` in 2×2×2 cells of `kind` (tet meshes from the box generator), interior
/// corner nodes moved off the grid; the second-order nodes of the moved cells put back on
/// straight edges and flat faces, so that every cell is an affine image of its reference cell
/// where it is not a trilinear one.
fn distorted_patch(kind: SolidKind) -> (Vec<[f64; 3]>, Vec<usize>) {
    let cells = match kind {
        SolidKind::Tet4 => BoxCells::Tet4,
        SolidKind::Tet10 => BoxCells::Tet10,
        SolidKind::Hex8 => BoxCells::Hex8,
        SolidKind::Hex20 => BoxCells::Hex20,
        SolidKind::Hex27 => BoxCells::Hex27,
    };
    let mesh = box_mesh([1.0, 1.0, 1.0], [2, 2, 2], cells).unwrap();
    let mut points = mesh.points.clone();
    let interior = |p: &[f64; 3]| p.iter().all(|&c| c > 1e-12 && c < 1.0 - 1e-12);
    for (i, p) in points.iter_mut().enumerate() {
        // Only the grid's corner nodes (all coordinates multiples of 1/2).
        let grid = p
            .iter()
            .all(|c| ((2.0 * c) - (2.0 * c).round()).abs() < 1e-12);
        if interior(p) && grid {
            let s = i as f64;
            p[0] += 0.08 * (1.3 * s).sin();
            p[1] += 0.07 * (2.1 * s).cos();
            p[2] += 0.06 * (0.7 * s + 0.4).sin();
        }
    }
    let conn = mesh.blocks[0].connectivity.clone();
    let n = kind.n_nodes();
    for c in conn.chunks_exact(n) {
        match kind {
            SolidKind::Tet10 => {
                for (e, (a, b)) in TET10_EDGES.into_iter().enumerate() {
                    let (pa, pb) = (points[c[a]], points[c[b]]);
                    points[c[4 + e]] = std::array::from_fn(|i| 0.5 * (pa[i] + pb[i]));
                }
            }
            SolidKind::Hex20 | SolidKind::Hex27 => {
                // The trilinear image of the reference nodes: an exact hex8 geometry.
                let corners: Vec<[f64; 3]> = (0..8).map(|a| points[c[a]]).collect();
                let refs = kind.reference_nodes();
                for a in 8..n {
                    let mut w = [0.0; 8];
                    SolidKind::Hex8.values_into(refs[a], &mut w);
                    points[c[a]] =
                        std::array::from_fn(|i| (0..8).map(|b| w[b] * corners[b][i]).sum());
                }
            }
            _ => {}
        }
    }
    let _ = (HEX20_EDGES, HEX27_FACES);
    (points, conn)
}

/// An affine motion `x = (I + A) X + b`, i.e. `F = I + A` everywhere.
const A: [[f64; 3]; 3] = [[0.12, -0.05, 0.03], [0.04, -0.08, 0.06], [-0.02, 0.05, 0.1]];
const B: [f64; 3] = [0.3, -0.2, 0.1];

#[test]
fn every_formulation_passes_the_patch_test_on_a_distorted_mesh() {
    let f: Mat3 =
        std::array::from_fn(|i| std::array::from_fn(|j| A[i][j] + if i == j { 1.0 } else { 0.0 }));
    for element in elements() {
        let kind = element.kind();
        let (points, conn) = distorted_patch(kind);
        let n = kind.n_nodes();
        for model in MODELS {
            let m = Material::new(model, 1.0e3, 0.3).unwrap();
            let (p, _) = m.first_piola(&f);
            let pscale = p.iter().flatten().fold(0.0f64, |a, v| a.max(v.abs()));
            let u: Vec<f64> = points
                .iter()
                .flat_map(|x| {
                    (0..3).map(move |i| (0..3).map(|j| A[i][j] * x[j]).sum::<f64>() + B[i])
                })
                .collect();
            let mut global = vec![0.0; u.len()];
            let (mut ue, mut fe) = (vec![0.0; 3 * n], vec![0.0; 3 * n]);
            let mut total_energy = 0.0;
            let mut volume = 0.0;
            for nodes in conn.chunks_exact(n) {
                let x: Vec<[f64; 3]> = nodes.iter().map(|&a| points[a]).collect();
                let geo = geometry(&element, &m, &x);
                gather(&u, nodes, &mut ue);
                assert_eq!(element.force(&m, &geo, &ue, &mut fe), None, "{element}");
                for (a, &node) in nodes.iter().enumerate() {
                    for i in 0..3 {
                        global[3 * node + i] += fe[3 * a + i];
                    }
                }
                let (e, hourglass) = element.strain_energy(&m, &geo, &ue).unwrap();
                assert!(
                    hourglass.abs() < 1e-12 * pscale,
                    "{element}: hourglass {hourglass}"
                );
                total_energy += e;
                volume += element.volume(&geo);
                let out = element.stress(&m, &geo, &ue).unwrap();
                let sigma = mat_mul(
                    &p,
                    &std::array::from_fn(|i| std::array::from_fn(|j| f[j][i])),
                );
                let j = fem_elements::solid::material::det3(&f);
                let want = [
                    sigma[0][0] / j,
                    sigma[1][1] / j,
                    sigma[2][2] / j,
                    sigma[0][1] / j,
                    sigma[1][2] / j,
                    sigma[0][2] / j,
                ];
                for c in 0..6 {
                    assert!(
                        (out.cauchy[c] - want[c]).abs() < 1e-11 * pscale,
                        "{element} {model} σ{c}: {} vs {}",
                        out.cauchy[c],
                        want[c]
                    );
                }
            }
            assert!((volume - 1.0).abs() < 1e-12, "{element}: {volume}");
            assert!(
                (total_energy - m.energy(&f)).abs() < 1e-11 * pscale,
                "{element} {model}"
            );
            let mut interior = 0;
            for (node, x) in points.iter().enumerate() {
                if x.iter().all(|&c| c > 1e-12 && c < 1.0 - 1e-12) {
                    interior += 1;
                    for i in 0..3 {
                        let v = global[3 * node + i];
                        assert!(
                            v.abs() < 1e-11 * pscale,
                            "{element} {model} node {node}: {v:e}"
                        );
                    }
                }
            }
            assert!(interior >= 1);
        }
    }
}

/// The exact pure-bending field of linear elasticity about `z` with curvature `kappa`.
fn pure_bending(x: [f64; 3], kappa: f64, nu: f64) -> [f64; 3] {
    [
        -kappa * x[0] * x[1],
        0.5 * kappa * (x[0] * x[0] + nu * (x[1] * x[1] - x[2] * x[2])),
        kappa * nu * x[1] * x[2],
    ]
}

#[test]
fn incompatible_modes_bend_a_rectangular_cell_exactly() {
    // A slender box cell [−a, a] × [−b, b] × [−c, c]: the compatible hex8 under the nodal
    // values of pure bending stores far too much energy (shear locking); the enhanced element
    // and the one-point element with its hourglass stiffness store the exact ½ E κ² I_z 2a.
    let (a, b, c) = (2.0, 0.25, 0.4);
    let x: Vec<[f64; 3]> = SolidKind::Hex8
        .reference_nodes()
        .iter()
        .map(|p| [a * p[0], b * p[1], c * p[2]])
        .collect();
    // Linear elasticity: the energy ½ uᵀ K(0) u of the tangent at the reference state.
    let (young, nu) = (1000.0, 0.3);
    let kappa = 1.0;
    let exact = 0.5 * young * kappa * kappa * (2.0 * c * (2.0 * b).powi(3) / 12.0) * 2.0 * a;
    let u: Vec<f64> = x.iter().flat_map(|&p| pure_bending(p, kappa, nu)).collect();
    for model in MODELS {
        let m = Material::new(model, young, nu).unwrap();
        let energy_of = |formulation| {
            let element = Element::new(SolidKind::Hex8, formulation).unwrap();
            let geo = geometry(&element, &m, &x);
            let mut k = vec![0.0; 576];
            assert_eq!(element.tangent(&m, &geo, &[0.0; 24], &mut k), None);
            0.5 * (0..24)
                .map(|r| u[r] * (0..24).map(|c| k[r * 24 + c] * u[c]).sum::<f64>())
                .sum::<f64>()
        };
        let full = energy_of(Formulation::Full);
        assert!(
            full > 5.0 * exact,
            "{model}: the full hex8 locks ({full} vs {exact})"
        );
        for formulation in [Formulation::Eas, Formulation::OnePoint] {
            let e = energy_of(formulation);
            assert!(
                (e - exact).abs() < 1e-12 * exact,
                "{model} {formulation}: {e} vs {exact}"
            );
        }
    }
}

#[test]
fn the_one_point_element_is_the_enhanced_element_in_the_linear_range() {
    // On a distorted cell, the one-point tangent at the reference state (constant part plus
    // hourglass stiffness) equals the enhanced element's.
    let x = cell(SolidKind::Hex8);
    for model in MODELS {
        let m = Material::new(model, 200.0, 0.35).unwrap();
        let tangent = |formulation| {
            let element = Element::new(SolidKind::Hex8, formulation).unwrap();
            let geo = geometry(&element, &m, &x);
            let mut k = vec![0.0; 576];
            element.tangent(&m, &geo, &[0.0; 24], &mut k);
            k
        };
        let (k1, ke) = (tangent(Formulation::OnePoint), tangent(Formulation::Eas));
        let scale = ke.iter().fold(0.0f64, |a, v| a.max(v.abs()));
        for (i, (p, q)) in k1.iter().zip(&ke).enumerate() {
            assert!(
                (p - q).abs() < 1e-11 * scale,
                "{model} entry {i}: {p} vs {q}"
            );
        }
        // Its hourglass stiffness is positive definite (no zero-energy mode is left).
        let geo = geometry(
            &Element::new(SolidKind::Hex8, Formulation::OnePoint).unwrap(),
            &m,
            &x,
        );
        let khat = one_point::hourglass_stiffness(&geo);
        let kh = nalgebra::SMatrix::<f64, 12, 12>::from_fn(|r, c| khat[r][c]);
        let eigen = kh.symmetric_eigenvalues();
        assert!(eigen.min() > 1e-3 * eigen.max(), "{model}: {eigen}");
    }
}

#[test]
fn hourglass_vectors_are_orthogonal_to_linear_fields() {
    let h = one_point::hourglass_vectors();
    let nodes = SolidKind::Hex8.reference_nodes();
    for (alpha, ha) in h.iter().enumerate() {
        assert!(ha.iter().all(|v| v.abs() == 1.0));
        assert_eq!(ha.iter().sum::<f64>(), 0.0, "{alpha}");
        for k in 0..3 {
            let dot: f64 = (0..8).map(|a| ha[a] * nodes[a][k]).sum();
            assert_eq!(dot, 0.0);
        }
        for (beta, hb) in h.iter().enumerate() {
            let dot: f64 = (0..8).map(|a| ha[a] * hb[a]).sum();
            assert_eq!(dot, if alpha == beta { 8.0 } else { 0.0 });
        }
    }
}

#[test]
fn fbar_removes_the_volumetric_part_of_the_points() {
    // For a nearly incompressible material under a displacement with a volume change that
    // varies over the cell, F-bar stores only the mean volume change's energy: far less than
    // the full element.
    let x = cell(SolidKind::Hex8);
    let m = Material::new(MaterialModel::NeoHookean, 1.0, 0.4999).unwrap();
    let u: Vec<f64> = x
        .iter()
        .flat_map(|p| [0.01 * p[0] * p[1], -0.005 * p[1] * p[2], 0.0])
        .collect();
    let energy_of = |formulation| {
        let element = Element::new(SolidKind::Hex8, formulation).unwrap();
        let geo = geometry(&element, &m, &x);
        energy(&element, &m, &geo, &u)
    };
    let (full, fbar) = (energy_of(Formulation::Full), energy_of(Formulation::FBar));
    assert!(fbar < 0.05 * full, "{fbar} vs {full}");
}

#[test]
fn unsupported_pairs_are_refused_by_name() {
    let e = Element::new(SolidKind::Tet4, Formulation::Eas).unwrap_err();
    assert!(e.to_string().contains("'eas'") && e.to_string().contains("tet4"));
    assert!(Element::new(SolidKind::Tet4, Formulation::FBar).is_err());
    assert!(Element::new(SolidKind::Hex27, Formulation::OnePoint).is_err());
    assert_eq!(
        Formulation::names_for(SolidKind::Hex8),
        "full, eas, fbar, one_point"
    );
    assert_eq!(Formulation::names_for(SolidKind::Tet4), "full");
}

/// The grouped storage of `one_point` (groups of `LANES` cells, value by value) gives the
/// force of the per-cell storage bit for bit, from any lane of a group on and for any count
/// (partial first and last groups), and its layout round-trips; an inverted cell is found at
/// its own position.
#[test]
fn grouped_one_point_force_is_the_per_cell_force_bit_for_bit() {
    let element = Element::new(SolidKind::Hex8, Formulation::OnePoint).unwrap();
    let g = element.group_cells();
    assert!(g > 1, "one_point groups its cells");
    let material = Material::from_shear_and_bulk(MaterialModel::NeoHookean, 0.25, 5.0).unwrap();
    // 21 distorted cells on their own nodes, each a different shape and displacement.
    let n_cells = 21;
    let len = element.geometry_len();
    let mut points = Vec::new();
    let mut blocks = Vec::new();
    for c in 0..n_cells {
        let x: Vec<[f64; 3]> = cell(SolidKind::Hex8)
            .iter()
            .map(|p| {
                [
                    p[0] + 0.01 * c as f64 * p[1],
                    p[1],
                    p[2] * (1.0 + 0.02 * c as f64),
                ]
            })
            .collect();
        blocks.extend(geometry(&element, &material, &x));
        points.extend(x);
    }
    let connectivity: Vec<usize> = (0..8 * n_cells).collect();
    let mut u: Vec<f64> = displacement(8 * n_cells, 0.04);
    for first in 0..g {
        for count in [1, g - first, g, 2 * g + 3, n_cells - first] {
            let count = count.min(n_cells - first).max(1);
            // Cells `first..first + count` as lanes `first..` of groups of their own.
            let mut grouped = vec![0.0; element.grouped_len(first + count)];
            for i in 0..first + count {
                for m in 0..len {
                    grouped[element.grouped_index(i, m)] = blocks[i * len + m];
                }
            }
            for i in 0..first + count {
                let lane = one_point::unpack_lane(
                    &grouped[(i / g) * len * g..(i / g + 1) * len * g],
                    i % g,
                );
                assert_eq!(&lane[..], &blocks[i * len..(i + 1) * len]);
            }
            let conn = &connectivity[8 * first..8 * (first + count)];
            let mut by_cell = vec![0.0; 24 * count];
            let mut by_group = vec![1.0; 24 * count];
            let a = element.internal_forces(
                &material,
                &blocks[first * len..(first + count) * len],
                conn,
                &u,
                &mut by_cell,
            );
            let b = element.internal_forces_grouped(
                &material,
                &grouped,
                first,
                conn,
                &u,
                &mut by_group,
            );
            assert!(a.is_none() && b.is_none());
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(
                bits(&by_cell),
                bits(&by_group),
                "first lane {first}, {count} cells"
            );
            assert!(by_cell.iter().any(|&f| f.abs() > 1e-3));
        }
    }
    // Invert cell 13 (node 0 pushed through the cell): both report it.
    for i in 0..3 {
        u[3 * 8 * 13 + i] = 10.0;
    }
    let mut grouped = vec![0.0; element.grouped_len(n_cells)];
    for i in 0..n_cells {
        for m in 0..len {
            grouped[element.grouped_index(i, m)] = blocks[i * len + m];
        }
    }
    let mut f = vec![0.0; 24 * n_cells];
    let failed = element
        .internal_forces_grouped(&material, &grouped, 0, &connectivity, &u, &mut f)
        .expect("an inverted cell");
    assert_eq!(failed.cell, 13);
}

/// The grouped strain energy of `one_point` (groups read as whole lanes) is the per-cell
/// energy bit for bit, from any lane of a group on and for any count, for every material
/// model, with its hourglass part; an inverted cell gets `NaN`, its neighbours their energy.
#[test]
fn grouped_one_point_energy_is_the_per_cell_energy_bit_for_bit() {
    let element = Element::new(SolidKind::Hex8, Formulation::OnePoint).unwrap();
    let g = element.group_cells();
    let len = element.geometry_len();
    // 19 distorted cells on their own nodes, each a different shape and displacement.
    let n_cells = 19;
    let shapes: Vec<Vec<[f64; 3]>> = (0..n_cells)
        .map(|c| {
            cell(SolidKind::Hex8)
                .iter()
                .map(|p| {
                    let s = c as f64;
                    [
                        p[0] + 0.013 * s * p[2],
                        p[1] * (1.0 - 0.01 * s),
                        p[2] + 0.02 * s * p[0],
                    ]
                })
                .collect()
        })
        .collect();
    let connectivity: Vec<usize> = (0..8 * n_cells).collect();
    let mut u: Vec<f64> = displacement(8 * n_cells, 0.05);
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    for model in MODELS {
        let material = Material::new(model, 100.0, 0.3).unwrap();
        let blocks: Vec<f64> = shapes
            .iter()
            .flat_map(|x| geometry(&element, &material, x))
            .collect();
        // Cell by cell.
        let (mut by_cell, mut hg_by_cell) = (Vec::new(), Vec::new());
        for (c, nodes) in connectivity.chunks_exact(8).enumerate() {
            let mut ue = [0.0; 24];
            gather(&u, nodes, &mut ue);
            let (e, h) = element
                .strain_energy(&material, &blocks[c * len..(c + 1) * len], &ue)
                .unwrap();
            assert!(e > h && h > 0.0, "{model:?} cell {c}: {e} {h}");
            // The lanes' fused multiply-adds against the plain products of the stress output.
            let x8: [[f64; 3]; 8] =
                std::array::from_fn(|a| [ue[3 * a], ue[3 * a + 1], ue[3 * a + 2]]);
            let plain = one_point::hourglass_energy(&blocks[c * len..(c + 1) * len], &x8);
            assert!((h - plain).abs() < 1e-14 * h, "{h} vs {plain}");
            by_cell.push(e);
            hg_by_cell.push(h);
        }
        for first in 0..g {
            for count in [1, g - first, g, 2 * g + 3, n_cells - first] {
                let count = count.min(n_cells - first).max(1);
                let mut grouped = vec![0.0; element.grouped_len(first + count)];
                for i in 0..first + count {
                    for m in 0..len {
                        grouped[element.grouped_index(i, m)] = blocks[i * len + m];
                    }
                }
                let (mut e, mut h) = (vec![-1.0; count], vec![-1.0; count]);
                element.strain_energies_grouped(
                    &material,
                    &grouped,
                    first,
                    &connectivity[8 * first..8 * (first + count)],
                    &u,
                    &mut e,
                    &mut h,
                );
                let cells = first..first + count;
                assert_eq!(
                    bits(&e),
                    bits(&by_cell[cells.clone()]),
                    "{model:?}, first lane {first}, {count} cells"
                );
                assert_eq!(bits(&h), bits(&hg_by_cell[cells]));
            }
        }
    }
    // Invert cell 11: its energy is NaN, the others are finite.
    for i in 0..3 {
        u[3 * 8 * 11 + i] = 10.0;
    }
    let material = Material::from_shear_and_bulk(MaterialModel::NeoHookean, 0.25, 5.0).unwrap();
    let mut grouped = vec![0.0; element.grouped_len(n_cells)];
    for (i, x) in shapes.iter().enumerate() {
        let geo = geometry(&element, &material, x);
        for m in 0..len {
            grouped[element.grouped_index(i, m)] = geo[m];
        }
    }
    let (mut e, mut h) = (vec![0.0; n_cells], vec![0.0; n_cells]);
    element.strain_energies_grouped(&material, &grouped, 0, &connectivity, &u, &mut e, &mut h);
    for c in 0..n_cells {
        assert_eq!(e[c].is_nan(), c == 11, "cell {c}: {}", e[c]);
        assert_eq!(h[c].is_nan(), c == 11);
    }
}

/// The ungrouped formulations' energy batch is their per-cell energy, cell by cell.
#[test]
fn the_energy_batch_of_every_formulation_is_its_per_cell_energy() {
    let material = Material::new(MaterialModel::NeoHookeanLog, 100.0, 0.3).unwrap();
    for element in elements() {
        let x = cell(element.kind());
        let n = element.n_nodes();
        let geo = geometry(&element, &material, &x);
        // Three copies of the cell on their own nodes, three displacements.
        let n_cells = 3;
        let mut grouped = vec![0.0; element.grouped_len(n_cells)];
        for i in 0..n_cells {
            for (m, &v) in geo.iter().enumerate() {
                grouped[element.grouped_index(i, m)] = v;
            }
        }
        let connectivity: Vec<usize> = (0..n * n_cells).collect();
        let u = displacement(n * n_cells, 0.03);
        let (mut e, mut h) = (vec![0.0; n_cells], vec![0.0; n_cells]);
        element.strain_energies_grouped(&material, &grouped, 0, &connectivity, &u, &mut e, &mut h);
        for c in 0..n_cells {
            let (ec, hc) = element
                .strain_energy(&material, &geo, &u[3 * n * c..3 * n * (c + 1)])
                .unwrap();
            assert_eq!(e[c].to_bits(), ec.to_bits(), "{element} cell {c}");
            assert_eq!(h[c].to_bits(), hc.to_bits(), "{element} cell {c}");
            assert!(ec > 0.0);
        }
    }
}
