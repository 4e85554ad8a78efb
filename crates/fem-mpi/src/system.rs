//! [`DistributedSolid`]: one rank's subdomain of a solid as a
//! [`LeapFrogSystem`], so that the DEF_EXP stepper of `fem-time`
//! runs on it unchanged.
//!
//! The unknowns are the free dofs of the rank's nodes (owned and ghost). Every force
//! evaluation computes the cells on the subdomain's boundary, sends their contributions at
//! shared nodes to the neighbours (non-blocking), computes the interior cells while the
//! messages travel, and sums each node's contributions in global cell order
//! ([`Subdomain::gather`]): every rank holding a node has the serial force there, bit for
//! bit, and updates the node as the serial run does. The lumped mass is assembled the same
//! way once. Global quantities are collective: the critical step (the largest element
//! eigenvalue over all ranks), the strain and kinetic energies and the work terms (exactly
//! rounded sums of the owned terms, [`ExactSum`]), and the agreement on a failure.

use std::sync::{Arc, Mutex};

use fem_assembly::{DofMap, ExactSum, SolidError, SolidOperator, StableStep};
use fem_constraints::{DirichletConditions, DirichletSet};
use fem_model::InputError;
use fem_solid::system::evaluation_error;
use fem_solid::{DeadLoads, SolidSetup};
use fem_time::{EvalError, LeapFrogSystem, Mass, SecondOrderSystem, TangentKind};
use mpi::collective::SystemOperation;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;

use crate::collective::agree;
use crate::subdomain::Subdomain;

/// Message tag of the force exchange.
const FORCE_TAG: i32 = 14;
/// Values an exact sum's parts may take in a collective (a count, the non-finite part and up
/// to 62 partials: an `f64` sum never needs more than about 40).
const SUM_PARTS: usize = 64;

/// Scratch buffers of a force evaluation.
#[derive(Debug, Default)]
struct Scratch {
    u: Vec<f64>,
    slots: Vec<f64>,
    send: Vec<Vec<f64>>,
    received: Vec<f64>,
    nodal: Vec<f64>,
}

/// One rank's share of a solid.
pub struct DistributedSolid {
    world: SimpleCommunicator,
    sub: Subdomain,
    operator: Arc<SolidOperator>,
    mass: Mass,
    /// Body force and dead tractions on this subdomain's free dofs.
    loads: DeadLoads,
    /// Per local free dof: this rank owns its node.
    owned_dof: Vec<bool>,
    /// Per local free dof: its index among the whole body's free dofs.
    global_free: Vec<usize>,
    /// Some rank has an external force (the same on every rank).
    has_external: bool,
    scratch: Mutex<Scratch>,
}

impl std::fmt::Debug for DistributedSolid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DistributedSolid")
            .field("rank", &self.sub.rank)
            .field("n_cells", &self.sub.n_cells())
            .field("n_nodes", &self.sub.nodes.len())
            .field("neighbours", &self.sub.neighbours.len())
            .finish_non_exhaustive()
    }
}

/// `e` with its cell index turned from the subdomain's into the whole mesh's.
fn globalize(e: SolidError, cells: &[usize]) -> SolidError {
    let g = |c: usize| cells.get(c).copied().unwrap_or(c);
    match e {
        SolidError::NodeOutOfRange {
            kind,
            cell,
            node,
            n_nodes,
        } => SolidError::NodeOutOfRange {
            kind,
            cell: g(cell),
            node,
            n_nodes,
        },
        SolidError::InvertedCell { kind, cell, source } => SolidError::InvertedCell {
            kind,
            cell: g(cell),
            source,
        },
        SolidError::Mass { kind, cell, source } => SolidError::Mass {
            kind,
            cell: g(cell),
            source,
        },
        SolidError::Inverted { kind, cell } => SolidError::Inverted {
            kind,
            cell: g(cell),
        },
        SolidError::ModesNotConverged { kind, cell } => SolidError::ModesNotConverged {
            kind,
            cell: g(cell),
        },
        other => other,
    }
}

impl DistributedSolid {
    /// This rank's subdomain `sub` of the solid `setup` describes. Collective: a bad cell
    /// or mass on any rank is every rank's error (the lowest failing rank's, its cell
    /// numbered in the whole mesh, as the serial run would name it).
    pub fn new(
        world: SimpleCommunicator,
        setup: &SolidSetup,
        sub: Subdomain,
    ) -> Result<Self, InputError> {
        let points: Vec<[f64; 3]> = sub.nodes.iter().map(|&v| setup.mesh.points[v]).collect();
        let fixed: Vec<usize> = sub
            .nodes
            .iter()
            .enumerate()
            .flat_map(|(l, &v)| (0..3).map(move |c| (l, v, c)))
            .filter(|&(_, v, c)| setup.dofmap.free(3 * v + c).is_none())
            .map(|(l, _, c)| 3 * l + c)
            .collect();
        let dofmap = DofMap::with_fixed(sub.nodes.len(), 3, fixed);
        let operator = setup
            .operator(&points, &sub.connectivity, &sub.cells, &dofmap)
            .map_err(|e| setup.operator_error(globalize(e, &sub.cells)));
        let operator = agree(&world, operator)?;
        let global_free: Vec<usize> = dofmap
            .free_dofs()
            .iter()
            .map(|&d| {
                setup
                    .dofmap
                    .free(3 * sub.nodes[d / 3] + d % 3)
                    .expect("a local free dof is free in the whole body")
            })
            .collect();
        let owned_dof = dofmap
            .free_dofs()
            .iter()
            .map(|&d| sub.owned[d / 3])
            .collect();
        let mut system = Self {
            world,
            sub,
            operator: Arc::new(operator),
            mass: Mass::Lumped(Vec::new()),
            loads: DeadLoads::new(dofmap.n_free()),
            owned_dof,
            global_free,
            has_external: false,
            scratch: Mutex::new(Scratch::default()),
        };
        // The lumped mass, assembled as the force is.
        let masses = system
            .operator
            .cell_lumped_masses(setup.lumping)
            .map_err(|e| setup.operator_error(globalize(e, &system.sub.cells)));
        let mut slots = agree(&system.world, masses)?;
        let mut m = vec![0.0; dofmap.n_free()];
        system
            .assemble(&mut slots, &mut m, |_| Ok(()))
            .map_err(|e| setup.operator_error(e))?;
        if let Some(g) = setup.gravity {
            let weight = m
                .iter()
                .zip(dofmap.free_dofs())
                .map(|(mi, &d)| mi * g[d % 3]);
            system.loads.add_constant(weight);
        }
        system.mass = Mass::Lumped(m);
        for t in &setup.tractions {
            let unit = std::array::from_fn(|i| {
                let mut e = [0.0; 3];
                e[i] = 1.0;
                let (f, _) = fem_assembly::solid::face_traction_vector(
                    t.kind,
                    &setup.mesh.points,
                    &t.faces,
                    e,
                    &setup.dofmap,
                );
                system.global_free.iter().map(|&g| f[g]).collect()
            });
            system.loads.add_traction(unit, t.value.clone());
        }
        let local = !system.loads.is_zero();
        let mut any = 0i32;
        system
            .world
            .all_reduce_into(&i32::from(local), &mut any, SystemOperation::max());
        system.has_external = any != 0;
        Ok(system)
    }

    /// The prescribed dofs of the whole body that are this subdomain's, on its free dofs.
    pub fn dirichlet(&self, whole: &DirichletConditions) -> DirichletConditions {
        let mut local_of = vec![usize::MAX; whole.dof_bound().max(1)];
        let n_global = self.global_free.iter().max().map_or(0, |m| m + 1);
        if local_of.len() < n_global {
            local_of.resize(n_global, usize::MAX);
        }
        for (l, &g) in self.global_free.iter().enumerate() {
            local_of[g] = l;
        }
        let sets: Vec<DirichletSet> = whole
            .iter()
            .enumerate()
            .filter(|(_, (dof, _, _))| local_of.get(*dof).is_some_and(|&l| l != usize::MAX))
            .map(|(index, (dof, _, enforcement))| DirichletSet {
                dofs: vec![fem_constraints::SystemDof::new(local_of[dof])],
                signal: whole.shared_signal(index),
                enforcement,
            })
            .collect();
        DirichletConditions::new(&sets).expect("a subset of consistent conditions is consistent")
    }

    /// This rank's values of a vector on the whole body's free dofs.
    pub fn restrict(&self, whole: &[f64]) -> Vec<f64> {
        self.global_free.iter().map(|&g| whole[g]).collect()
    }

    /// The subdomain.
    pub fn subdomain(&self) -> &Subdomain {
        &self.sub
    }

    /// The subdomain's operator (its cells, local node numbering).
    pub fn operator(&self) -> &SolidOperator {
        &self.operator
    }

    /// The subdomain's operator, shared (the frames of the model use it).
    pub fn shared_operator(&self) -> Arc<SolidOperator> {
        Arc::clone(&self.operator)
    }

    /// The communicator.
    pub fn world(&self) -> &SimpleCommunicator {
        &self.world
    }

    /// The displacement of all the subdomain's node dofs from its free dofs `x`.
    pub fn full_displacement(&self, x: &[f64], u: &mut Vec<f64>) {
        let dofmap = self.operator.dofmap();
        u.resize(dofmap.n_dofs(), 0.0);
        dofmap.scatter(x, 0.0, u);
    }

    /// Values sent per force evaluation by this rank (all neighbours).
    pub fn values_sent_per_step(&self) -> usize {
        self.sub.neighbours.iter().map(|n| 3 * n.send.len()).sum()
    }

    /// Assembles per-cell slots into the free-dof vector `out`: the boundary cells' slots are
    /// ready; `interior(slots)` fills the rest while the boundary contributions travel.
    fn assemble(
        &self,
        slots: &mut [f64],
        out: &mut [f64],
        interior: impl FnOnce(&mut [f64]) -> Result<(), SolidError>,
    ) -> Result<(), SolidError> {
        let mut send = Vec::new();
        let mut received = Vec::new();
        let mut nodal = Vec::new();
        self.exchange_and_gather(slots, out, interior, &mut send, &mut received, &mut nodal)
    }

    fn exchange_and_gather(
        &self,
        slots: &mut [f64],
        out: &mut [f64],
        interior: impl FnOnce(&mut [f64]) -> Result<(), SolidError>,
        send: &mut Vec<Vec<f64>>,
        received: &mut Vec<f64>,
        nodal: &mut Vec<f64>,
    ) -> Result<(), SolidError> {
        let sub = &self.sub;
        send.resize_with(sub.neighbours.len(), Vec::new);
        for (k, buf) in send.iter_mut().enumerate() {
            sub.pack(k, slots, buf);
        }
        received.resize(3 * sub.n_recv, 0.0);
        let result = mpi::request::scope(|scope| {
            let mut requests = Vec::with_capacity(2 * sub.neighbours.len());
            let mut rest: &mut [f64] = received;
            for nb in &sub.neighbours {
                let (mine, tail) = std::mem::take(&mut rest).split_at_mut(3 * nb.n_recv);
                rest = tail;
                requests.push(
                    self.world
                        .process_at_rank(nb.rank as i32)
                        .immediate_receive_into_with_tag(scope, mine, FORCE_TAG),
                );
            }
            for (nb, buf) in sub.neighbours.iter().zip(send.iter()) {
                requests.push(
                    self.world
                        .process_at_rank(nb.rank as i32)
                        .immediate_send_with_tag(scope, &buf[..], FORCE_TAG),
                );
            }
            let result = interior(slots);
            for r in requests {
                r.wait();
            }
            result
        });
        nodal.resize(3 * sub.nodes.len(), 0.0);
        sub.gather(slots, received, nodal);
        let dofmap = self.operator.dofmap();
        for (f, &d) in out.iter_mut().zip(dofmap.free_dofs()) {
            *f = nodal[d];
        }
        result
    }

    /// The exact sum of `local` (this rank's terms) over all ranks.
    fn global_sum(&self, local: &ExactSum) -> f64 {
        exact_global_sum(&self.world, local)
    }
}

/// The exact sum of `local` (this rank's terms) over the ranks of `world` (a collective).
pub(crate) fn exact_global_sum(world: &SimpleCommunicator, local: &ExactSum) -> f64 {
    let mut parts = local.to_parts();
    if parts.len() > SUM_PARTS - 1 {
        // Not reached by f64 sums (at most ~40 partials); kept exact enough to stay safe.
        parts = vec![parts[0], local.value()];
    }
    let mut send = [0.0; SUM_PARTS];
    send[0] = parts.len() as f64;
    send[1..=parts.len()].copy_from_slice(&parts);
    let mut all = vec![0.0; SUM_PARTS * world.size() as usize];
    world.all_gather_into(&send[..], &mut all[..]);
    let mut total = ExactSum::new();
    for block in all.chunks_exact(SUM_PARTS) {
        let len = block[0] as usize;
        total.merge(&ExactSum::from_parts(&block[1..=len]));
    }
    total.value()
}

/// The sum over the ranks a distributed solid's history needs (its hourglass energy).
pub(crate) struct RankSum(pub(crate) SimpleCommunicator);

impl fem_solid::model::SumOverProcesses for RankSum {
    fn sum(&self, local: &ExactSum) -> f64 {
        exact_global_sum(&self.0, local)
    }
}

impl SecondOrderSystem for DistributedSolid {
    fn n_dofs(&self) -> usize {
        self.operator.dofmap().n_free()
    }

    fn mass(&self) -> &Mass {
        &self.mass
    }

    fn internal_force(&self, x: &[f64], f: &mut [f64]) -> Result<(), EvalError> {
        let mut scratch = self.scratch.lock().unwrap_or_else(|e| e.into_inner());
        let Scratch {
            u,
            slots,
            send,
            received,
            nodal,
        } = &mut *scratch;
        self.full_displacement(x, u);
        slots.resize(self.sub.n_cells() * 3 * self.sub.n, 0.0);
        let nb = self.sub.n_boundary_cells;
        let n_cells = self.sub.n_cells();
        let boundary = self.operator.cell_forces_range(u, 0..nb, slots);
        let u: &[f64] = u;
        let interior = |slots: &mut [f64]| self.operator.cell_forces_range(u, nb..n_cells, slots);
        self.exchange_and_gather(slots, f, interior, send, received, nodal)
            .and(boundary)
            .map_err(|e| evaluation_error(globalize(e, &self.sub.cells)))
    }

    /// Only DEF_EXP runs distributed: no tangent.
    fn tangent_kind(&self) -> TangentKind {
        TangentKind::NotProvided
    }

    fn potential_energy(&self, x: &[f64]) -> Option<f64> {
        let mut u = Vec::new();
        self.full_displacement(x, &mut u);
        let e = self.global_sum(&self.operator.strain_energy_sum(&u));
        e.is_finite().then_some(e)
    }

    fn external_force(&self, t: f64, f: &mut [f64]) {
        self.loads.force(t, f);
    }

    fn has_external_force(&self) -> bool {
        self.has_external
    }

    fn dof_points(&self) -> Option<Vec<[f64; 3]>> {
        // The serial body's points of the same dofs (the spectral critical step starts from a
        // field of the positions, so that every rank starts where the serial run does).
        Some(
            self.operator
                .dofmap()
                .free_dof_points(self.operator.points()),
        )
    }
}

impl LeapFrogSystem for DistributedSolid {
    fn critical_step(&self, x: &[f64]) -> Result<StableStep, EvalError> {
        let mut u = Vec::new();
        self.full_displacement(x, &mut u);
        // (failed, λ_max or the failed cell, the cell), the cell numbered in the whole mesh.
        let local = match self.operator.stable_step(&u) {
            Ok(s) => [
                0.0,
                s.lambda_max,
                self.sub.cells.get(s.cell).map_or(f64::MAX, |&c| c as f64),
            ],
            Err(e) => match globalize(e, &self.sub.cells) {
                SolidError::Inverted { cell, .. } => [1.0, cell as f64, cell as f64],
                _ => [1.0, f64::MAX, f64::MAX],
            },
        };
        let mut all = vec![0.0; 3 * self.world.size() as usize];
        self.world.all_gather_into(&local[..], &mut all[..]);
        let mut best: Option<(f64, f64)> = None;
        let mut failed: Option<f64> = None;
        for r in all.chunks_exact(3) {
            if r[0] != 0.0 {
                failed = Some(failed.map_or(r[1], |c: f64| c.min(r[1])));
            } else if r[2] != f64::MAX {
                best = match best {
                    Some((l, c)) if l > r[1] || (l == r[1] && c <= r[2]) => Some((l, c)),
                    _ => Some((r[1], r[2])),
                };
            }
        }
        if let Some(cell) = failed {
            return Err(EvalError::InvertedCell {
                element: self.operator.kind().name(),
                cell: cell as usize,
            });
        }
        let (lambda_max, cell) = best.unwrap_or((f64::NEG_INFINITY, 0.0));
        Ok(StableStep {
            dt: 2.0 / lambda_max.sqrt(),
            lambda_max,
            cell: cell as usize,
        })
    }

    fn sum_over_dofs(&self, terms: &mut dyn Iterator<Item = (usize, f64)>) -> f64 {
        let mut local = ExactSum::new();
        for (i, v) in terms {
            if self.owned_dof[i] {
                local.add(v);
            }
        }
        self.global_sum(&local)
    }

    fn all_agree(&self, ok: bool) -> bool {
        let mut all = 0i32;
        self.world
            .all_reduce_into(&i32::from(ok), &mut all, SystemOperation::min());
        all != 0
    }
}
