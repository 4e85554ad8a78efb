//! The exponential map against a high-precision reference: the matrix Taylor series
//! `exp[Ψ̂] − I = Σ_{k≥1} Ψ̂^k / k!` summed in double-double arithmetic (~32 digits), for
//! angles from 1e-12 to 3 in many directions. `exp_increment` (what the schemes use) must be
//! accurate relative to its own size, `exp_map` to round-off in each entry; the seed's formula
//! evaluated literally is shown for contrast.
//!
//! Run with `--nocapture` for the table in docs/validation.md.

use fem_rigid::rotation::{SERIES_ANGLE, exp_increment, exp_map, hat};

/// A double-double number `hi + lo`, `|lo| ≤ ulp(hi)/2`.
#[derive(Clone, Copy, Debug)]
struct Dd {
    hi: f64,
    lo: f64,
}

fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = s - a;
    (s, (a - (s - bb)) + (b - bb))
}

fn quick_two_sum(a: f64, b: f64) -> Dd {
    let s = a + b;
    Dd {
        hi: s,
        lo: b - (s - a),
    }
}

/// Dekker's split (no FMA needed).
fn split(a: f64) -> (f64, f64) {
    let c = 134_217_729.0 * a;
    let hi = c - (c - a);
    (hi, a - hi)
}

fn two_prod(a: f64, b: f64) -> (f64, f64) {
    let p = a * b;
    let (ah, al) = split(a);
    let (bh, bl) = split(b);
    (p, ((ah * bh - p) + ah * bl + al * bh) + al * bl)
}

impl Dd {
    const ZERO: Dd = Dd { hi: 0.0, lo: 0.0 };

    fn from(a: f64) -> Dd {
        Dd { hi: a, lo: 0.0 }
    }

    fn add(self, o: Dd) -> Dd {
        let (s, e) = two_sum(self.hi, o.hi);
        quick_two_sum(s, e + self.lo + o.lo)
    }

    fn mul(self, o: Dd) -> Dd {
        let (p, e) = two_prod(self.hi, o.hi);
        quick_two_sum(p, e + self.hi * o.lo + self.lo * o.hi)
    }

    fn div_f64(self, d: f64) -> Dd {
        let q1 = self.hi / d;
        let (p, e) = two_prod(q1, d);
        let r = (self.hi - p) - e + self.lo;
        quick_two_sum(q1, r / d)
    }

    fn to_f64(self) -> f64 {
        self.hi + self.lo
    }
}

type DdMat = [[Dd; 3]; 3];

/// `exp[Ψ̂] − I` by its Taylor series in double-double.
fn reference_increment(psi: [f64; 3]) -> [[f64; 3]; 3] {
    let a: DdMat = hat(psi).map(|row| row.map(Dd::from));
    let mut term: DdMat = a;
    let mut sum: DdMat = a;
    for k in 2..80 {
        let mut next = [[Dd::ZERO; 3]; 3];
        for i in 0..3 {
            for j in 0..3 {
                let mut s = Dd::ZERO;
                for m in 0..3 {
                    s = s.add(term[i][m].mul(a[m][j]));
                }
                next[i][j] = s.div_f64(k as f64);
            }
        }
        term = next;
        let mut largest: f64 = 0.0;
        for i in 0..3 {
            for j in 0..3 {
                sum[i][j] = sum[i][j].add(term[i][j]);
                largest = largest.max(term[i][j].hi.abs());
            }
        }
        if largest < 1e-40 {
            break;
        }
    }
    sum.map(|row| row.map(Dd::to_f64))
}

/// The seed's formula evaluated literally, `I + sin θ/θ Ψ̂ + (1 − cos θ)/θ² Ψ̂²` (minus `I`).
fn literal_increment(psi: [f64; 3]) -> [[f64; 3]; 3] {
    let t = (psi[0] * psi[0] + psi[1] * psi[1] + psi[2] * psi[2]).sqrt();
    let (a, b) = (t.sin() / t, (1.0 - t.cos()) / (t * t));
    let h = hat(psi);
    let mut d = [[0.0; 3]; 3];
    for i in 0..3 {
        for j in 0..3 {
            let h2: f64 = (0..3).map(|m| h[i][m] * h[m][j]).sum();
            d[i][j] = a * h[i][j] + b * h2;
        }
    }
    d
}

fn max_abs(m: &[[f64; 3]; 3]) -> f64 {
    m.iter().flatten().fold(0.0, |acc: f64, v| acc.max(v.abs()))
}

fn max_diff(a: &[[f64; 3]; 3], b: &[[f64; 3]; 3]) -> f64 {
    let mut d: f64 = 0.0;
    for i in 0..3 {
        for j in 0..3 {
            d = d.max((a[i][j] - b[i][j]).abs());
        }
    }
    d
}

/// Deterministic unit directions (a small LCG), including the axes.
fn directions() -> Vec<[f64; 3]> {
    let mut dirs = vec![[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
    let mut state: u64 = 0x2545_F491_4F6C_DD1D;
    let mut next = || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((state >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
    };
    while dirs.len() < 40 {
        let v = [next(), next(), next()];
        let n = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
        if n > 0.1 && n <= 1.0 {
            dirs.push(v.map(|c| c / n));
        }
    }
    dirs
}

#[test]
fn exp_map_is_accurate_at_every_angle() {
    let angles = [
        1e-12, 1e-8, 1e-6, 1e-4, 1e-3, 4.47e-3, 4.48e-3, 1e-2, 0.1, 0.3, 0.49, 0.5, 0.51, 1.0, 2.0,
        3.0,
    ];
    assert!(angles.contains(&SERIES_ANGLE));
    println!(
        "| angle | max rel. error of exp − I (ours) | max abs. error of exp (ours) | max rel. error of exp − I (seed's formula literally) |"
    );
    println!("|---|---|---|---|");
    let mut worst_increment: f64 = 0.0;
    for theta in angles {
        let (mut rel, mut abs, mut literal): (f64, f64, f64) = (0.0, 0.0, 0.0);
        for dir in directions() {
            let psi = dir.map(|c| theta * c);
            let reference = reference_increment(psi);
            let scale = max_abs(&reference);
            rel = rel.max(max_diff(&exp_increment(psi), &reference) / scale);
            let mut full = reference;
            for (i, row) in full.iter_mut().enumerate() {
                row[i] += 1.0;
            }
            abs = abs.max(max_diff(&exp_map(psi), &full));
            literal = literal.max(max_diff(&literal_increment(psi), &reference) / scale);
        }
        println!("| {theta:e} | {rel:.2e} | {abs:.2e} | {literal:.2e} |");
        worst_increment = worst_increment.max(rel);
        // Each entry of exp[Ψ] within one ulp of 1 up to θ = 1, three beyond.
        let ulps = if theta <= 1.0 { 1.0 } else { 3.0 };
        assert!(abs <= ulps * f64::EPSILON, "{theta}: {abs:e}");
    }
    // Relative to its own size, the increment is right to a few units of round-off at every
    // angle (its largest entry is ~θ, so this is the accuracy that matters as θ → 0).
    assert!(worst_increment < 4.0 * f64::EPSILON, "{worst_increment:e}");
}

#[test]
fn exp_map_is_a_rotation() {
    for dir in directions() {
        for theta in [1e-10, 0.2, 0.5, 1.7, 3.1] {
            let e = exp_map(dir.map(|c| theta * c));
            // The coefficients' round-off enters ΛᵀΛ − I multiplied by Ψ̂², of size θ².
            let defect = fem_rigid::rotation::orthonormality_defect(&e);
            assert!(
                defect <= 2.0 * f64::EPSILON * (1.0 + theta * theta),
                "{theta} {defect:e}"
            );
            // det = +1 and the axis is fixed.
            let det = e[0][0] * (e[1][1] * e[2][2] - e[1][2] * e[2][1])
                - e[0][1] * (e[1][0] * e[2][2] - e[1][2] * e[2][0])
                + e[0][2] * (e[1][0] * e[2][1] - e[1][1] * e[2][0]);
            assert!((det - 1.0).abs() < 1e-15);
            let ea: Vec<f64> = (0..3)
                .map(|i| (0..3).map(|j| e[i][j] * dir[j]).sum::<f64>() - dir[i])
                .collect();
            assert!(ea.iter().all(|v| v.abs() < 1e-15));
        }
    }
}
