//! One rank's share of a partitioned mesh: its cells, its nodes (owned and ghost), and the
//! exchange plan that makes a distributed sum at a shared node the serial one bit for bit.
//!
//! The serial force at node `i` is `((0 + f_{c1,i}) + f_{c2,i}) + …` over the cells touching
//! `i` in increasing cell order (`fem_assembly::NodeBlockPlan::gather_into`). Partial sums per
//! rank cannot be combined into that. So a rank sends, for each shared node, the individual
//! contributions `f_{c,i}` of its cells (3 values per (cell, node) pair) to every other rank
//! touching the node, and each rank sums, at each of its nodes, its own and the received
//! contributions in increasing global cell order, starting from `0`. Every rank touching a
//! node then holds the serial sum; the nodal update of the explicit scheme is done by each of
//! them identically (a ghost node needs no displacement message).
//!
//! The plan is computed from the global connectivity and the partition alone, identically on
//! every rank: the sender's list for a neighbour and the receiver's list from it are the same
//! (cell, node) pairs in the same (cell, local node) order, with no handshake.

use rayon::prelude::*;

/// A neighbouring rank and what goes to and comes from it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Neighbour {
    /// The neighbour's rank.
    pub rank: usize,
    /// The node slots (`local cell · N + a`) whose 3 values are sent to it, in order.
    pub send: Vec<usize>,
    /// Where its contributions start in the receive buffer (in node slots).
    pub recv_offset: usize,
    /// How many node slots it sends.
    pub n_recv: usize,
}

/// One rank's cells and nodes, and its exchange plan.
#[derive(Clone, Debug)]
pub struct Subdomain {
    /// This rank.
    pub rank: usize,
    /// Nodes per cell.
    pub n: usize,
    /// Global indices of the local cells: those touching a shared node (boundary cells) first,
    /// then the interior ones, each in increasing order.
    pub cells: Vec<usize>,
    /// How many of `cells` are boundary cells.
    pub n_boundary_cells: usize,
    /// Global indices of the local nodes, increasing.
    pub nodes: Vec<usize>,
    /// The local cells' nodes in local numbering.
    pub connectivity: Vec<usize>,
    /// Whether this rank owns each local node (the lowest rank touching it does): the node's
    /// terms count in global sums here only.
    pub owned: Vec<bool>,
    /// The neighbours, in increasing rank.
    pub neighbours: Vec<Neighbour>,
    /// Node slots received in all.
    pub n_recv: usize,
    /// Node `i`'s contributions are `sources[offsets[i]..offsets[i + 1]]`, in increasing
    /// global cell order: a source `s < cells.len() · N` is a local node slot, else received
    /// slot `s − cells.len() · N`.
    offsets: Vec<usize>,
    sources: Vec<usize>,
}

impl Subdomain {
    /// Rank `rank`'s subdomain of the cells `connectivity` (`n` nodes each) over `n_nodes`
    /// nodes, with `parts[cell]` the rank of each cell.
    ///
    /// # Panics
    /// If the lengths disagree or a node is out of range (caller errors).
    pub fn new(
        connectivity: &[usize],
        n: usize,
        n_nodes: usize,
        parts: &[u32],
        rank: usize,
    ) -> Self {
        let n_cells = connectivity.len() / n;
        assert_eq!(parts.len(), n_cells);
        // The ranks touching each node (sorted, distinct), as a compressed list.
        let mut pairs: Vec<(u32, u32)> = Vec::with_capacity(connectivity.len());
        for (c, cell) in connectivity.chunks_exact(n).enumerate() {
            for &v in cell {
                pairs.push((v as u32, parts[c]));
            }
        }
        pairs.sort_unstable();
        pairs.dedup();
        let mut touch_offsets = vec![0usize; n_nodes + 1];
        for &(v, _) in &pairs {
            touch_offsets[v as usize + 1] += 1;
        }
        for i in 0..n_nodes {
            touch_offsets[i + 1] += touch_offsets[i];
        }
        let touch: Vec<u32> = pairs.iter().map(|&(_, p)| p).collect();
        drop(pairs);
        let ranks_of = |v: usize| &touch[touch_offsets[v]..touch_offsets[v + 1]];
        let shared = |v: usize| touch_offsets[v + 1] - touch_offsets[v] > 1;
        let me = rank as u32;

        // Local cells: boundary first, then interior.
        let mine: Vec<usize> = (0..n_cells).filter(|&c| parts[c] == me).collect();
        let is_boundary = |c: usize| connectivity[n * c..n * (c + 1)].iter().any(|&v| shared(v));
        let mut cells: Vec<usize> = mine.iter().copied().filter(|&c| is_boundary(c)).collect();
        let n_boundary_cells = cells.len();
        cells.extend(mine.iter().copied().filter(|&c| !is_boundary(c)));

        // Local nodes, increasing.
        let mut local_of = vec![usize::MAX; n_nodes];
        for &c in &mine {
            for &v in &connectivity[n * c..n * (c + 1)] {
                local_of[v] = 0;
            }
        }
        let mut nodes = Vec::new();
        for (v, l) in local_of.iter_mut().enumerate() {
            if *l == 0 {
                *l = nodes.len();
                nodes.push(v);
            }
        }
        let local_connectivity: Vec<usize> = cells
            .iter()
            .flat_map(|&c| {
                connectivity[n * c..n * (c + 1)]
                    .iter()
                    .map(|&v| local_of[v])
            })
            .collect();
        let owned: Vec<bool> = nodes.iter().map(|&v| ranks_of(v)[0] == me).collect();

        // Neighbours: the other ranks touching a local node.
        let mut others: Vec<u32> = nodes
            .iter()
            .flat_map(|&v| ranks_of(v).iter().copied())
            .filter(|&p| p != me)
            .collect();
        others.sort_unstable();
        others.dedup();

        // Cells of each neighbour, increasing.
        let mut cells_of: Vec<Vec<usize>> = vec![Vec::new(); others.len()];
        for c in 0..n_cells {
            if let Ok(k) = others.binary_search(&parts[c]) {
                cells_of[k].push(c);
            }
        }
        let n_local_slots = cells.len() * n;
        // (global cell, source) per local node, to be sorted.
        let mut contributions: Vec<Vec<(usize, usize)>> = vec![Vec::new(); nodes.len()];
        for (lc, &c) in cells.iter().enumerate() {
            for a in 0..n {
                contributions[local_connectivity[n * lc + a]].push((c, n * lc + a));
            }
        }
        let mut neighbours = Vec::with_capacity(others.len());
        let mut n_recv = 0;
        for (k, &q) in others.iter().enumerate() {
            let mut send = Vec::new();
            for (lc, &c) in cells[..n_boundary_cells].iter().enumerate() {
                for a in 0..n {
                    let v = connectivity[n * c + a];
                    if ranks_of(v).binary_search(&q).is_ok() {
                        send.push(n * lc + a);
                    }
                }
            }
            let recv_offset = n_recv;
            for &c in &cells_of[k] {
                for a in 0..n {
                    let v = connectivity[n * c + a];
                    if local_of[v] != usize::MAX {
                        contributions[local_of[v]].push((c, n_local_slots + n_recv));
                        n_recv += 1;
                    }
                }
            }
            neighbours.push(Neighbour {
                rank: q as usize,
                send,
                recv_offset,
                n_recv: n_recv - recv_offset,
            });
        }
        let mut offsets = Vec::with_capacity(nodes.len() + 1);
        let mut sources = Vec::with_capacity(n_local_slots + n_recv);
        offsets.push(0);
        for mut list in contributions {
            list.sort_unstable();
            sources.extend(list.iter().map(|&(_, s)| s));
            offsets.push(sources.len());
        }
        Self {
            rank,
            n,
            cells,
            n_boundary_cells,
            nodes,
            connectivity: local_connectivity,
            owned,
            neighbours,
            n_recv,
            offsets,
            sources,
        }
    }

    /// Number of local cells.
    pub fn n_cells(&self) -> usize {
        self.cells.len()
    }

    /// Packs the values (3 per node slot) that go to neighbour `k` from the local `slots`.
    pub fn pack(&self, k: usize, slots: &[f64], out: &mut Vec<f64>) {
        out.clear();
        for &s in &self.neighbours[k].send {
            out.extend_from_slice(&slots[3 * s..3 * s + 3]);
        }
    }

    /// The nodal sums (3 per local node, `out`) of the local `slots` and the received
    /// contributions `received` (3 per received node slot), each in increasing global cell
    /// order from `0`: the serial gather's sums (parallel over nodes; each sum's order fixed).
    pub fn gather(&self, slots: &[f64], received: &[f64], out: &mut [f64]) {
        let n_local = slots.len() / 3;
        assert_eq!(n_local, self.cells.len() * self.n);
        assert_eq!(received.len(), 3 * self.n_recv);
        assert_eq!(out.len(), 3 * self.nodes.len());
        const NODES_PER_TASK: usize = 2048;
        out.par_chunks_mut(3 * NODES_PER_TASK)
            .enumerate()
            .for_each(|(task, chunk)| {
                for (j, sum_out) in chunk.chunks_exact_mut(3).enumerate() {
                    let i = task * NODES_PER_TASK + j;
                    let mut sum = [0.0; 3];
                    for &s in &self.sources[self.offsets[i]..self.offsets[i + 1]] {
                        let v = if s < n_local {
                            &slots[3 * s..3 * s + 3]
                        } else {
                            &received[3 * (s - n_local)..3 * (s - n_local) + 3]
                        };
                        sum[0] += v[0];
                        sum[1] += v[1];
                        sum[2] += v[2];
                    }
                    sum_out.copy_from_slice(&sum);
                }
            });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::partition::{centroids, recursive_bisection};
    use fem_mesh::generate::{BoxCells, box_mesh};

    /// Every rank's gathered sums equal the serial gather bit for bit, on a box split into
    /// 1–5 parts, with per-(cell, node) values spanning many magnitudes (so that any other
    /// order of the sums would differ).
    #[test]
    fn distributed_gather_is_the_serial_gather_bitwise() {
        let mesh = box_mesh([3.0, 2.0, 1.0], [6, 4, 3], BoxCells::Hex8).unwrap();
        let block = mesh
            .blocks
            .iter()
            .find(|b| b.kind == fem_mesh::CellKind::Hex8)
            .unwrap();
        let conn: Vec<usize> = (0..block.n_cells())
            .flat_map(|c| block.cell(c).to_vec())
            .collect();
        let n = 8;
        let n_cells = conn.len() / n;
        let value = |c: usize, a: usize, k: usize| {
            let x = ((c * 31 + a * 7 + k * 3) % 97) as f64 / 97.0 - 0.4;
            x * 10f64.powi(((c * 13 + a) % 17) as i32 - 8)
        };
        let mut serial = vec![[0.0f64; 3]; mesh.n_nodes()];
        for c in 0..n_cells {
            for a in 0..n {
                for k in 0..3 {
                    serial[conn[n * c + a]][k] += value(c, a, k);
                }
            }
        }
        let cent = centroids(&mesh.points, &conn, n);
        for p in 1..=5 {
            let parts = recursive_bisection(&cent, p);
            let subs: Vec<Subdomain> = (0..p)
                .map(|r| Subdomain::new(&conn, n, mesh.n_nodes(), &parts, r))
                .collect();
            let slots: Vec<Vec<f64>> = subs
                .iter()
                .map(|s| {
                    s.cells
                        .iter()
                        .flat_map(|&c| {
                            (0..n).flat_map(move |a| (0..3).map(move |k| value(c, a, k)))
                        })
                        .collect()
                })
                .collect();
            let mut owners = vec![0; mesh.n_nodes()];
            for (r, s) in subs.iter().enumerate() {
                let mut received = vec![0.0; 3 * s.n_recv];
                for nb in &s.neighbours {
                    let sender = &subs[nb.rank];
                    let k = sender.neighbours.iter().position(|x| x.rank == r).unwrap();
                    let mut buf = Vec::new();
                    sender.pack(k, &slots[nb.rank], &mut buf);
                    assert_eq!(buf.len(), 3 * nb.n_recv);
                    received[3 * nb.recv_offset..3 * (nb.recv_offset + nb.n_recv)]
                        .copy_from_slice(&buf);
                }
                let mut out = vec![0.0; 3 * s.nodes.len()];
                s.gather(&slots[r], &received, &mut out);
                for (i, &v) in s.nodes.iter().enumerate() {
                    for k in 0..3 {
                        assert_eq!(out[3 * i + k].to_bits(), serial[v][k].to_bits(), "P = {p}");
                    }
                    owners[v] += usize::from(s.owned[i]);
                }
            }
            assert!(owners.iter().all(|&o| o == 1), "each node has one owner");
            let boundary: usize = subs.iter().map(|s| s.n_boundary_cells).sum();
            assert_eq!(boundary == 0, p == 1);
        }
    }
}
