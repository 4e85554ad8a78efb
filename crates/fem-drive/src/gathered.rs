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
//! gives up both. The price is memory on process 0: the gathered frame, at most three times the
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
/// buffer of a round, the decoded parts, and the encoded fields of the step being compressed
/// in the background).
const GATHER_FACTOR: f64 = 4.0;

impl GatheredSeries {
    /// Opens the series (`times`: a resumed run's frames) on every process; process 0 creates
    /// or resumes the file.
    pub fn open(
        dir: &Path,
        base: &str,
        precision: Precision,
        deflate: Option<u32>,
        capacity: usize,
        times: Option<&[f64]>,
        processes: &dyn Processes,
    ) -> Result<Self, RunError> {
        let series = if processes.rank() == 0 {
            let mut series = match times {
                None => VtkHdfSeries::create(dir, base, precision, capacity)
                    .map_err(RunError::OutputLocation)?,
                Some(times) => VtkHdfSeries::resume(dir, base, precision, capacity, times)
                    .map_err(|e| RunError::Checkpoint(fem_io::CheckpointError::Output(e)))?,
            };
            series.set_deflate(deflate);
            Some(series)
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

    /// Waits until every step given is written and published (process 0's file). Collective
    /// (failures agreed).
    pub fn flush(&mut self, processes: &dyn Processes) -> Result<(), RunError> {
        let flushed = match self.series.as_mut() {
            Some(s) => s.flush().map_err(RunError::Output),
            None => Ok(()),
        };
        agree(processes, flushed)
    }

    /// What an older run left (process 0, for every process's files).
    pub fn remove_stale(&self) -> Result<(), OutputError> {
        match &self.series {
            Some(s) => s.remove_stale(),
            None => Ok(()),
        }
    }

    /// Writes this process's part `frame` of the step at `time` (or `Err`: the failure this
    /// process met making it). Collective: every process calls it, and a failure on any (here, of the
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

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Barrier, Mutex};

    use fem_io::{Field, Frame, VtkCells};

    use super::*;

    /// The processes of a distributed run as threads: every collective is an exchange through
    /// shared slots between two barriers, so a process that skips one leaves the others
    /// waiting (the test would hang, not pass).
    struct Threads {
        rank: usize,
        size: usize,
        barrier: Arc<Barrier>,
        slots: Arc<Mutex<Vec<Vec<u8>>>>,
    }

    impl Threads {
        fn exchange(&self, mine: Vec<u8>) -> Vec<Vec<u8>> {
            self.slots.lock().unwrap()[self.rank] = mine;
            self.barrier.wait();
            let all = self.slots.lock().unwrap().clone();
            self.barrier.wait();
            all
        }
    }

    impl Processes for Threads {
        fn rank(&self) -> usize {
            self.rank
        }
        fn size(&self) -> usize {
            self.size
        }
        fn is_distributed(&self) -> bool {
            true
        }
        fn any(&self, flag: bool) -> bool {
            self.exchange(vec![u8::from(flag)])
                .iter()
                .any(|b| b[0] == 1)
        }
        fn first_message(&self, mine: Option<String>) -> Option<(usize, String)> {
            let bytes = mine.map_or_else(Vec::new, |m| {
                let mut b = vec![1];
                b.extend(m.into_bytes());
                b
            });
            self.exchange(bytes)
                .into_iter()
                .enumerate()
                .find(|(_, b)| !b.is_empty())
                .map(|(r, b)| (r, String::from_utf8(b[1..].to_vec()).unwrap()))
        }
        fn all_gather(&self, value: u64) -> Vec<u64> {
            self.exchange(value.to_le_bytes().to_vec())
                .iter()
                .map(|b| u64::from_le_bytes(b[..8].try_into().unwrap()))
                .collect()
        }
        fn gather_bytes(&self, mine: &[u8]) -> Vec<Vec<u8>> {
            let all = self.exchange(mine.to_vec());
            if self.rank == 0 { all } else { Vec::new() }
        }
    }

    /// Rank `r`'s part at step `k`: a line of `r + 2` points, a displacement and a cell value
    /// that depend on both; `bad` puts a NaN in the displacement.
    fn part(r: usize, k: usize, bad: bool) -> (Vec<[f64; 3]>, VtkCells, Vec<f64>, Vec<f64>) {
        let points: Vec<[f64; 3]> = (0..r + 2).map(|i| [i as f64, r as f64, 0.0]).collect();
        let mut cells = VtkCells::new();
        cells.push_polyline(&(0..r + 2).collect::<Vec<_>>());
        let mut u: Vec<f64> = (0..3 * (r + 2))
            .map(|i| (i as f64 + 0.1 * k as f64).sin() / (r + 1) as f64)
            .collect();
        if bad {
            u[1] = f64::NAN;
        }
        (points, cells, u, vec![k as f64 / 3.0 + r as f64])
    }

    /// Runs `steps` steps on `size` threads; rank `bad_rank` (if any) meets a NaN at step 1.
    fn run(dir: &Path, size: usize, steps: usize, bad_rank: Option<usize>) -> Vec<String> {
        let barrier = Arc::new(Barrier::new(size));
        let slots = Arc::new(Mutex::new(vec![Vec::new(); size]));
        let handles: Vec<_> = (0..size)
            .map(|rank| {
                let processes = Threads {
                    rank,
                    size,
                    barrier: Arc::clone(&barrier),
                    slots: Arc::clone(&slots),
                };
                let dir = dir.to_path_buf();
                std::thread::spawn(move || {
                    let mut series = GatheredSeries::open(
                        &dir,
                        "x",
                        Precision::Double,
                        None,
                        steps,
                        None,
                        &processes,
                    )
                    .unwrap();
                    for k in 0..steps {
                        let (points, cells, u, c) = part(rank, k, bad_rank == Some(rank) && k == 1);
                        let frame = Frame::new(&points, &cells)
                            .with_point_field(Field::vector("displacement", &u))
                            .with_cell_field(Field::scalar("c", &c));
                        let checked = match frame.first_non_finite_field() {
                            Some(name) => Err(RunError::NonFinite {
                                what: name.to_string(),
                                step: k as u64,
                                t: k as f64,
                            }),
                            None => Ok(&frame),
                        };
                        if let Err(e) = series.write(0.5 * k as f64, checked, &processes) {
                            return format!("{} frames, then: {e}", series.n_frames());
                        }
                    }
                    format!("{} frames", series.n_frames())
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    }

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("fem-drive-gathered-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn the_gathered_file_is_the_file_of_the_parts_written_by_one_writer() {
        let (gathered, direct) = (scratch("gathered"), scratch("direct"));
        let outcome = run(&gathered, 3, 4, None);
        assert_eq!(outcome, vec!["4 frames"; 3]);
        // The same parts handed to one writer: the same bytes.
        let mut series = VtkHdfSeries::create(&direct, "x", Precision::Double, 4).unwrap();
        for k in 0..4 {
            let parts: Vec<_> = (0..3).map(|r| part(r, k, false)).collect();
            let frames: Vec<Frame<'_>> = parts
                .iter()
                .map(|(p, cells, u, c)| {
                    Frame::new(p, cells)
                        .with_point_field(Field::vector("displacement", u))
                        .with_cell_field(Field::scalar("c", c))
                })
                .collect();
            series.write_parts(0.5 * k as f64, &frames).unwrap();
        }
        let a = std::fs::read(gathered.join("x.vtkhdf")).unwrap();
        let b = std::fs::read(direct.join("x.vtkhdf")).unwrap();
        assert!(a.len() > 1000 && a == b, "the gathered file differs");
        let _ = std::fs::remove_dir_all(&gathered);
        let _ = std::fs::remove_dir_all(&direct);
    }

    #[test]
    fn a_value_that_is_not_finite_on_one_rank_stops_every_rank_at_that_frame() {
        let dir = scratch("nan");
        let outcome = run(&dir, 3, 4, Some(2));
        for o in &outcome {
            assert!(
                o.starts_with("1 frames, then: rank 2: ") && o.contains("displacement"),
                "{o}"
            );
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
