//! Agreement between ranks on a failure: a failure met by one rank (a bad cell of its
//! subdomain, a file it cannot write, a non-finite value) becomes every rank's, named by the
//! lowest failing rank, so that all ranks stop at the same point and none waits for a
//! message that will not come.

use fem_model::InputError;
use mpi::collective::SystemOperation;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;

/// The message of the lowest rank that has one, with that rank, on every rank (`None` if no
/// rank has one). Collective.
pub fn first_message(world: &SimpleCommunicator, mine: Option<String>) -> Option<(usize, String)> {
    let size = world.size();
    let me = if mine.is_some() { world.rank() } else { size };
    let mut first = size;
    world.all_reduce_into(&me, &mut first, SystemOperation::min());
    if first == size {
        return None;
    }
    let root = world.process_at_rank(first);
    let mut bytes = if world.rank() == first {
        mine.unwrap_or_default().into_bytes()
    } else {
        Vec::new()
    };
    let mut len = bytes.len() as u64;
    root.broadcast_into(&mut len);
    bytes.resize(len as usize, 0);
    root.broadcast_into(&mut bytes[..]);
    Some((first as usize, String::from_utf8_lossy(&bytes).into_owned()))
}

/// `result` if every rank's is `Ok`, else the lowest failing rank's error on every rank.
/// Collective.
pub fn agree<T>(
    world: &SimpleCommunicator,
    result: Result<T, InputError>,
) -> Result<T, InputError> {
    let mine = result.as_ref().err().map(|e| {
        let message = match e {
            InputError::Invalid { message, .. } => message.clone(),
            InputError::Mesh { source, .. } => source.to_string(),
        };
        format!("{}\u{0}{message}", e.field())
    });
    match first_message(world, mine) {
        None => result,
        Some((_, m)) => {
            let (field, message) = m.split_once('\u{0}').unwrap_or(("input", &m));
            Err(InputError::invalid(field, message))
        }
    }
}
