//! The processes a run is on, as the run loop needs them: who this process is, the three
//! collective operations with which the processes agree (on a failure, an interrupt, the step
//! a restart is at), and the gather of bytes that brings every process's part of a frame to
//! process 0 when one file holds them all (VTKHDF).
//!
//! A serial run is [`Serial`]: one process, every operation the identity. A distributed run
//! implements [`Processes`] on its communicator (crate `fem-mpi`, over MPI); the run loop is
//! the same code, and every collective call is made by every process at the same point.

/// The processes of a run.
pub trait Processes {
    /// This process's index, `0..size()`.
    fn rank(&self) -> usize;
    /// How many processes run.
    fn size(&self) -> usize;
    /// Whether the run is distributed (its files are named per process, even on one).
    fn is_distributed(&self) -> bool;
    /// Whether `flag` holds on some process. Collective.
    fn any(&self, flag: bool) -> bool;
    /// The message of the lowest process that has one, with that process's rank, on every
    /// process (`None` when no process has one). Collective.
    fn first_message(&self, mine: Option<String>) -> Option<(usize, String)>;
    /// Every process's `value`, in rank order, on every process. Collective.
    fn all_gather(&self, value: u64) -> Vec<u64>;
    /// Every process's `mine`, in rank order, on process 0; an empty list on the others.
    /// Collective. The caller has agreed beforehand that every process can take part (the
    /// sizes, through [`all_gather`](Self::all_gather), checked against process 0's memory), so
    /// that no process is left waiting.
    fn gather_bytes(&self, mine: &[u8]) -> Vec<Vec<u8>>;
}

/// A run on one process.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Serial;

impl Processes for Serial {
    fn rank(&self) -> usize {
        0
    }
    fn size(&self) -> usize {
        1
    }
    fn is_distributed(&self) -> bool {
        false
    }
    fn any(&self, flag: bool) -> bool {
        flag
    }
    fn first_message(&self, mine: Option<String>) -> Option<(usize, String)> {
        mine.map(|m| (0, m))
    }
    fn all_gather(&self, value: u64) -> Vec<u64> {
        vec![value]
    }
    fn gather_bytes(&self, mine: &[u8]) -> Vec<Vec<u8>> {
        vec![mine.to_vec()]
    }
}

/// The checkpoint file of a process: `checkpoint.fem` in a serial run,
/// `checkpoint_R_of_P.fem` for process `R` of a distributed run on `P`.
pub fn checkpoint_name(processes: &dyn Processes) -> String {
    if processes.is_distributed() {
        format!(
            "checkpoint_{}_of_{}.fem",
            processes.rank(),
            processes.size()
        )
    } else {
        "checkpoint.fem".to_string()
    }
}

/// Whether `name` is a checkpoint that can only resume another run than one on `processes`: a
/// serial run's checkpoint in a distributed run, or a distributed one on another number of
/// processes (or any distributed one in a serial run).
pub fn is_other_runs_checkpoint(name: &str, processes: &dyn Processes) -> bool {
    if name == "checkpoint.fem" {
        return processes.is_distributed();
    }
    let Some(ranks) = name
        .strip_prefix("checkpoint_")
        .and_then(|n| n.strip_suffix(".fem"))
    else {
        return false;
    };
    let number = |s: &str| {
        (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
            .then(|| s.parse::<usize>().ok())
            .flatten()
    };
    match ranks.split_once("_of_") {
        Some((r, q)) => match (number(r), number(q)) {
            (Some(_), Some(q)) => !processes.is_distributed() || q != processes.size(),
            _ => false,
        },
        None => false,
    }
}

/// The pattern of the checkpoint files of a run on `processes`, for messages.
pub fn checkpoint_pattern(processes: &dyn Processes) -> String {
    if processes.is_distributed() {
        format!("checkpoint_*_of_{}.fem", processes.size())
    } else {
        "checkpoint.fem".to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A process of a distributed run, for the naming rules (its collectives are not called).
    struct Rank(usize, usize);

    impl Processes for Rank {
        fn rank(&self) -> usize {
            self.0
        }
        fn size(&self) -> usize {
            self.1
        }
        fn is_distributed(&self) -> bool {
            true
        }
        fn any(&self, flag: bool) -> bool {
            flag
        }
        fn first_message(&self, mine: Option<String>) -> Option<(usize, String)> {
            mine.map(|m| (self.0, m))
        }
        fn all_gather(&self, value: u64) -> Vec<u64> {
            vec![value]
        }
        fn gather_bytes(&self, _: &[u8]) -> Vec<Vec<u8>> {
            unreachable!("the naming rules gather nothing")
        }
    }

    #[test]
    fn checkpoints_are_named_per_process_and_older_runs_recognised() {
        assert_eq!(checkpoint_name(&Serial), "checkpoint.fem");
        assert_eq!(checkpoint_name(&Rank(2, 3)), "checkpoint_2_of_3.fem");
        let three = Rank(0, 3);
        assert!(is_other_runs_checkpoint("checkpoint.fem", &three));
        assert!(is_other_runs_checkpoint("checkpoint_1_of_4.fem", &three));
        assert!(!is_other_runs_checkpoint("checkpoint_1_of_3.fem", &three));
        assert!(!is_other_runs_checkpoint("checkpoint.fem", &Serial));
        assert!(is_other_runs_checkpoint("checkpoint_0_of_1.fem", &Serial));
        assert!(!is_other_runs_checkpoint("checkpoint_x_of_1.fem", &Serial));
        assert!(!is_other_runs_checkpoint("history.csv", &three));
    }
}
