//! The processes of `MPI_COMM_WORLD` as the run loop's [`Processes`]: the collective
//! operations over the communicator.

use fem_drive::Processes;
use mpi::Count;
use mpi::collective::SystemOperation;
use mpi::datatype::PartitionMut;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;

use crate::collective::first_message;

/// The processes of a distributed run.
pub struct MpiProcesses {
    world: SimpleCommunicator,
}

impl std::fmt::Debug for MpiProcesses {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MpiProcesses")
            .field("rank", &self.world.rank())
            .field("size", &self.world.size())
            .finish()
    }
}

impl MpiProcesses {
    /// The processes of `world`.
    pub fn new(world: SimpleCommunicator) -> Self {
        Self { world }
    }
}

impl Processes for MpiProcesses {
    fn rank(&self) -> usize {
        self.world.rank() as usize
    }

    fn size(&self) -> usize {
        self.world.size() as usize
    }

    fn is_distributed(&self) -> bool {
        true
    }

    fn any(&self, flag: bool) -> bool {
        let mut any = 0i32;
        self.world
            .all_reduce_into(&i32::from(flag), &mut any, SystemOperation::max());
        any != 0
    }

    fn first_message(&self, mine: Option<String>) -> Option<(usize, String)> {
        first_message(&self.world, mine)
    }

    fn all_gather(&self, value: u64) -> Vec<u64> {
        let mut all = vec![0u64; self.size()];
        self.world.all_gather_into(&value, &mut all[..]);
        all
    }

    /// `MPI_Gatherv` to rank 0, in rounds of at most `i32::MAX / size` bytes per rank (MPI
    /// counts and displacements are `int`), so a piece of any size goes through; every rank
    /// knows every length (an all-gather), hence the number of rounds.
    fn gather_bytes(&self, mine: &[u8]) -> Vec<Vec<u8>> {
        let size = self.size();
        let lengths = self.all_gather(mine.len() as u64);
        let round = (i32::MAX as usize / size.max(1)).max(1);
        let rounds = lengths
            .iter()
            .map(|&l| (l as usize).div_ceil(round))
            .max()
            .unwrap_or(0);
        let root = self.world.process_at_rank(0);
        let is_root = self.rank() == 0;
        let mut out: Vec<Vec<u8>> = if is_root {
            lengths
                .iter()
                .map(|&l| Vec::with_capacity(l as usize))
                .collect()
        } else {
            Vec::new()
        };
        let part = |l: u64, r: usize| {
            let start = (r * round).min(l as usize);
            let end = ((r + 1) * round).min(l as usize);
            (start, end)
        };
        let mut buffer = Vec::new();
        for r in 0..rounds {
            let (start, end) = part(mine.len() as u64, r);
            let send = &mine[start..end];
            if is_root {
                let counts: Vec<Count> = lengths
                    .iter()
                    .map(|&l| {
                        let (s, e) = part(l, r);
                        (e - s) as Count
                    })
                    .collect();
                let displs: Vec<Count> = counts
                    .iter()
                    .scan(0, |at, &c| {
                        let d = *at;
                        *at += c;
                        Some(d)
                    })
                    .collect();
                let total: usize = counts.iter().map(|&c| c as usize).sum();
                buffer.clear();
                buffer.resize(total, 0u8);
                {
                    let mut partition =
                        PartitionMut::new(&mut buffer[..], &counts[..], &displs[..]);
                    root.gather_varcount_into_root(send, &mut partition);
                }
                for (k, piece) in out.iter_mut().enumerate() {
                    let d = displs[k] as usize;
                    piece.extend_from_slice(&buffer[d..d + counts[k] as usize]);
                }
            } else {
                root.gather_varcount_into(send);
            }
        }
        out
    }
}
