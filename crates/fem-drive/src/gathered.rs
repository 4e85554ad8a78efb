//! The frames of a distributed run in one VTKHDF file: every process encodes its part of a
//! frame ([`fem_io::encode_piece`]), process 0 gathers the parts
//! ([`Processes::gather_bytes`]) and writes them as the parts of one time step
//! ([`VtkHdfSeries::write_parts`]): one part per process, in rank order, each with its own
//! points (shared nodes repeated, marked `vtkGhostType` = 1 in every part but the owner's, as
//! in the `.vtu` pieces of a `.pvd` run) and its own cells.
//!
//! Why not parallel HDF5: the file is this project's own HDF5 subset (`fem_io::hdf5`), laid
//! out so that a killed run leaves a readable file and a resumed run writes the same bytes;
//! parallel HDF5 needs the C library built with MPI-IO (not in README's two commands) and
//! gives up both. The price is memory on process 0: the gathered frame, about three times the
//! frame's bytes while it is written (the records, one round's receive buffer, the decoded
//! parts) — checked against the memory budget before anything is gathered.

use std::path::{Path, PathBuf};

use fem_io::{FrameSink, OutputError, OwnedPiece, Precision, VtkHdfSeries, encode_piece};

use crate::RunError;
use crate::error::agree;
use crate::processes::Processes;

/// Process 0's series, and what every process knows of it.
pub(crate) struct GatheredSeries {
    /// The file (process 0 only).
    series: Option<VtkHdfSeries>,
    path: PathBuf,
    n_frames: usize,
    /// This process's encoded part (reused).
    piece: Vec<u8>,
}

/// Bytes process 0 holds at once per byte of the gathered records (the records, the receive
/// buffer of a round, the decoded parts).
const GATHER_FACTOR: f64 = 3.0;

impl GatheredSeries {
    /// Opens the series (`times`: a resumed run's frames) on every process; process 0 creates
    /// or resumes the file.
    pub fn open(
        dir: &Path,
        base: &str,
        precision: Precision,
        capacity: usize,
        times: Option<&[f64]>,
        processes: &dyn Processes,
    ) -> Result<Self, RunError> {
        let series = if processes.rank() == 0 {
            Some(match times {
                None => VtkHdfSeries::create(dir, base, precision, capacity)
                    .map_err(RunError::OutputLocation)?,
                Some(times) => VtkHdfSeries::resume(dir, base, precision, capacity, times)
                    .map_err(|e| RunError::Checkpoint(fem_io::CheckpointError::Output(e)))?,
            })
        } else {
            None
        };
        Ok(Self {
            series,
            path: dir.join(format!("{base}.vtkhdf")),
            n_frames: times.map_or(0, <[f64]>::len),
            piece: Vec::new(),
        })
    }

    /// Frames written so far.
    pub fn n_frames(&self) -> usize {
        self.n_frames
    }

    /// The `.vtkhdf` file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// What an older run left (process 0, for every process's files).
    pub fn remove_stale(&self) -> Result<(), OutputError> {
        match &self.series {
            Some(s) => s.remove_stale(),
            None => Ok(()),
        }
    }

    /// Writes this process's part `frame` of the step at `time`, or the failure `mine` met
    /// making it. Collective: every process calls it, and a failure on any (here, of the
    /// memory check, of the file) is every process's.
    pub fn write(
        &mut self,
        time: f64,
        frame: Result<&fem_io::Frame<'_>, RunError>,
        processes: &dyn Processes,
    ) -> Result<(), RunError> {
        let encoded = frame.map(|f| {
            self.piece.clear();
            encode_piece(f, &mut self.piece);
        });
        agree(processes, encoded)?;
        let lengths = processes.all_gather(self.piece.len() as u64);
        let total: f64 = lengths.iter().map(|&l| l as f64).sum();
        let fits = if processes.rank() == 0 {
            fem_model::resources::Budget::from_machine(None)
                .and_then(|budget| {
                    budget.check_memory(
                        "output.format",
                        "gathering the frame's parts on process 0",
                        GATHER_FACTOR * total,
                    )
                })
                .map_err(|e| invalid(&self.path, e.to_string()))
                .map_err(RunError::Output)
        } else {
            Ok(())
        };
        agree(processes, fits)?;
        let records = processes.gather_bytes(&self.piece);
        let written = match self.series.as_mut() {
            None => Ok(()),
            Some(series) => {
                let parts = records
                    .iter()
                    .enumerate()
                    .map(|(rank, r)| {
                        OwnedPiece::decode(r).map_err(|m| {
                            invalid(&self.path, format!("the part of rank {rank}: {m}"))
                        })
                    })
                    .collect::<Result<Vec<_>, _>>();
                drop(records);
                parts.and_then(|parts| {
                    let frames: Vec<_> = parts.iter().map(OwnedPiece::frame).collect();
                    series.write_parts(time, &frames).map(|_| ())
                })
            }
        };
        agree(processes, written.map_err(RunError::Output))?;
        self.n_frames += 1;
        Ok(())
    }
}

fn invalid(path: &Path, message: String) -> OutputError {
    OutputError::InvalidData {
        path: path.to_path_buf(),
        message,
    }
}
