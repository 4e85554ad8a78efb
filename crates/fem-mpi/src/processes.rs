//! The processes of `MPI_COMM_WORLD` as the run loop's [`Processes`]: the three collective
//! operations over the communicator.

use fem_drive::Processes;
use mpi::collective::SystemOperation;
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
}
