//! The contact layer's share of a step on a pile of 10⁴ bodies (issue 23's performance item,
//! for the layer alone: the scene stepper that moves the bodies comes later).
//!
//! A lattice of 20 × 20 × 25 = 10⁴ rigid bodies, spheres and cubes alternating, each resting
//! on the one below (overlap 1e-4 of the size) and the lowest on a plane. Each "step": detect
//! (BVH broad phase, parry manifolds), build the constraint points, assemble `W` and `q`
//! (free velocities: one step of gravity, `h = 1e-3`), solve by NSGS warm-started from the
//! previous step's impulses (tolerance 1e-6), and give the impulses back. Reported: contacts,
//! time per phase, sweeps, and contact updates per core-second (contacts × steps / CPU s) on
//! one thread and on two.
//!
//! `cargo bench -p fem-contact --bench pile` (`PILE_N=k` for a k × k × 25 lattice).

use std::time::Instant;

use fem_contact::body::{AssemblySettings, ContactBody, PointMap, assemble};
use fem_contact::detect::{
    DetectSettings, MaterialTable, Obstacle, PlacedShape, Placement, Shape, constraints_of, detect,
};
use fem_contact::{CapPolicy, NsgsSettings, SurfaceMaterial, solve};
use nalgebra::{Matrix3, Vector3};

/// A rigid body for the bench: dofs `[v, ω]` (world), `A = diag(m, J)`.
struct Rigid {
    mass: f64,
    inverse_inertia: f64,
    centre: Vector3<f64>,
    free: [f64; 6],
    velocity: [f64; 6],
}

impl ContactBody for Rigid {
    fn dof_count(&self) -> usize {
        6
    }
    fn free_velocity(&self) -> &[f64] {
        &self.free
    }
    fn start_velocity(&self) -> &[f64] {
        &self.velocity
    }
    fn point_map(&self, point: &Vector3<f64>, out: &mut PointMap) {
        let d = point - self.centre;
        out.extend((0..3).map(|k| (k, Vector3::ith(k, 1.0))));
        out.extend((0..3).map(|k| (3 + k, Vector3::<f64>::ith(k, 1.0).cross(&d))));
    }
    fn inverse_inertia_map(&self, h: &PointMap, out: &mut PointMap) {
        out.extend(h.iter().map(|&(d, v)| {
            (
                d,
                v * if d < 3 {
                    1.0 / self.mass
                } else {
                    self.inverse_inertia
                },
            )
        }));
    }
    fn apply_impulse(&mut self, p: &[f64]) {
        for d in 0..6 {
            let a = if d < 3 {
                1.0 / self.mass
            } else {
                self.inverse_inertia
            };
            self.velocity[d] = self.free[d] + a * p[d];
        }
    }
}

fn run(n: usize, layers: usize, steps: usize) -> (usize, [f64; 4], u64, f64) {
    let h = 1e-3;
    let g = 9.81;
    let overlap = 1e-4;
    let mut shapes = Vec::new();
    let mut bodies = Vec::new();
    for i in 0..n {
        for j in 0..n {
            for k in 0..layers {
                let sphere = (i + j + k) % 2 == 0;
                let centre = Vector3::new(
                    i as f64 * 1.1,
                    j as f64 * 1.1,
                    0.5 + k as f64 * (1.0 - overlap) - overlap,
                );
                let (shape, mass, inertia) = if sphere {
                    (Shape::sphere(0.5).unwrap(), 0.524, 0.4 * 0.524 * 0.25)
                } else {
                    (Shape::cuboid([0.5; 3]).unwrap(), 1.0, 1.0 / 6.0)
                };
                shapes.push(PlacedShape {
                    shape,
                    placement: Placement {
                        translation: centre,
                        rotation: Matrix3::identity(),
                    },
                    material: 0,
                });
                let free = [0.0, 0.0, -g * h, 0.0, 0.0, 0.0];
                bodies.push(Rigid {
                    mass,
                    inverse_inertia: 1.0 / inertia,
                    centre,
                    free,
                    velocity: [0.0; 6],
                });
            }
        }
    }
    let obstacles = [Obstacle::Plane {
        point: Vector3::zeros(),
        normal: Vector3::z(),
    }];
    let materials = MaterialTable {
        default: SurfaceMaterial::new(0.5, 0.0).unwrap(),
        pairs: vec![],
        obstacle_materials: vec![0],
    };
    let settings = NsgsSettings {
        tolerance: 1e-6,
        max_sweeps: 500,
        on_cap: CapPolicy::WarnAndContinue,
        polish_after: Some(50),
        ..Default::default()
    };
    let mut times = [0.0; 4];
    let mut sweeps = 0;
    let mut contacts = 0;
    let mut warm: Vec<Vector3<f64>> = Vec::new();
    let mut worst = 0.0f64;
    for _ in 0..steps {
        let t = Instant::now();
        let found = detect(&shapes, &obstacles, &DetectSettings { prediction: 1e-3 }).unwrap();
        let cs = constraints_of(&found, &shapes, &materials);
        times[0] += t.elapsed().as_secs_f64();
        let t = Instant::now();
        let refs: Vec<&dyn ContactBody> = bodies.iter().map(|b| b as &dyn ContactBody).collect();
        let a = assemble(&cs, &refs, &AssemblySettings::default()).unwrap();
        times[1] += t.elapsed().as_secs_f64();
        let t = Instant::now();
        // The geometry does not move here, so the contact list is the same: warm start by index.
        let mut r = if warm.len() == cs.len() {
            warm.clone()
        } else {
            vec![Vector3::zeros(); cs.len()]
        };
        let rep = solve(&a.problem, &mut r, &settings).unwrap();
        times[2] += t.elapsed().as_secs_f64();
        let t = Instant::now();
        let mut muts: Vec<&mut dyn ContactBody> = bodies
            .iter_mut()
            .map(|b| b as &mut dyn ContactBody)
            .collect();
        a.apply(&r, &mut muts);
        times[3] += t.elapsed().as_secs_f64();
        sweeps += rep.sweeps;
        worst = worst.max(rep.error);
        contacts = cs.len();
        warm = r;
    }
    (contacts, times, sweeps, worst)
}

fn main() {
    let n: usize = std::env::var("PILE_N")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20);
    let layers = 25;
    let steps = 5;
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "# pile of {} bodies ({n} × {n} × {layers}), {steps} steps; load average at start: {}",
        n * n * layers,
        load.trim()
    );
    println!(
        "| threads | contacts | detect (s/step) | assemble (s/step) | solve (s/step) | apply (s/step) | sweeps/step | worst error | contact updates per core-second |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    for threads in [1, 2] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        let t = Instant::now();
        let (contacts, times, sweeps, worst) = pool.install(|| run(n, layers, steps));
        let wall = t.elapsed().as_secs_f64();
        let total: f64 = times.iter().sum();
        let per = |x: f64| x / steps as f64;
        println!(
            "| {threads} | {contacts} | {:.4} | {:.4} | {:.4} | {:.4} | {:.1} | {worst:.1e} | {:.3e} (phases {:.0} % detect, {:.0} % assemble, {:.0} % solve; wall {wall:.2} s incl. set-up) |",
            per(times[0]),
            per(times[1]),
            per(times[2]),
            per(times[3]),
            sweeps as f64 / steps as f64,
            (contacts * steps) as f64 / (total * threads as f64),
            100.0 * times[0] / total,
            100.0 * times[1] / total,
            100.0 * times[2] / total,
        );
    }
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!("# load average at end: {}", load.trim());
}
