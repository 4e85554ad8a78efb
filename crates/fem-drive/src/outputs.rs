//! The files a run writes — frames, `history.csv`, `probes.csv` — and what an uninterrupted run
//! would have written of them at each step (the cadence a checkpoint records).

use std::path::Path;

use fem_io::{
    FrameSeries, FrameSink, HistoryWriter, OutputError, PartitionedSeries, SeriesFormat,
    VtkHdfSeries,
};
use fem_model::Model;
use fem_time::{Energy, EnergyBalanceTracker, Invariant, StepReport};

use crate::error::agree;
use crate::gathered::GatheredSeries;
use crate::processes::Processes;
use crate::{COMMON_COLUMNS, EnergySummary, RunError, RunOptions};

/// The energy balance over the history rows of a run.
#[derive(Debug)]
pub(crate) struct EnergyTracker {
    pub invariant: Invariant,
    pub balance: EnergyBalanceTracker,
}

impl EnergyTracker {
    pub fn new(invariant: Invariant) -> Self {
        Self {
            invariant,
            balance: EnergyBalanceTracker::default(),
        }
    }

    pub fn observe(&mut self, e: &Energy) {
        self.balance.observe(e);
    }

    pub fn summary(&self) -> Option<EnergySummary> {
        self.balance.first.map(|_| EnergySummary {
            invariant: self.invariant,
            max_change: self.balance.max_change,
            scale: self.balance.scale,
            rows: self.balance.observed,
        })
    }
}

/// Where a run's frames go: a sink each process writes its part to, or the one VTKHDF file
/// process 0 writes a distributed run's parts to.
pub(crate) enum Frames {
    /// Each process writes its own (a serial run's series, a distributed run's `.vtu` pieces).
    Own(Box<dyn FrameSink>),
    /// The parts are gathered on process 0 (a distributed run's `.vtkhdf`).
    Gathered(Box<GatheredSeries>),
}

impl Frames {
    /// Frames written so far.
    pub fn n_frames(&self) -> usize {
        match self {
            Frames::Own(sink) => sink.n_frames(),
            Frames::Gathered(g) => g.n_frames(),
        }
    }

    /// The file a viewer opens.
    pub fn path(&self) -> &Path {
        match self {
            Frames::Own(sink) => sink.path(),
            Frames::Gathered(g) => g.path(),
        }
    }

    /// Waits until every frame given is written and listed ([`FrameSink::flush`]).
    /// Collective for a gathered series (failures agreed).
    pub fn flush(&mut self, processes: &dyn Processes) -> Result<(), RunError> {
        match self {
            Frames::Own(sink) => sink.flush().map_err(RunError::Output),
            Frames::Gathered(g) => g.flush(processes),
        }
    }

    /// What an older run of the same name left ([`FrameSink::remove_stale`]).
    pub fn remove_stale(&self) -> Result<(), OutputError> {
        match self {
            Frames::Own(sink) => sink.remove_stale(),
            Frames::Gathered(g) => g.remove_stale(),
        }
    }
}

/// The files of a run, and the scratch to write them. History and probes are process 0's.
pub(crate) struct Outputs {
    pub frames: Frames,
    /// The model's further series (`BASE_NAME.pvd`, [`Model::extra_series`]), written at the
    /// frames' steps; none for a distributed run.
    pub extras: Vec<FrameSeries>,
    pub history: Option<HistoryWriter>,
    pub probes: Option<HistoryWriter>,
    /// Whether the model has probes (every process knows; process 0 writes them).
    pub has_probes: bool,
    values: Vec<f64>,
    cells: Vec<Option<f64>>,
    probe_row: Vec<f64>,
    /// The history's length after its last row on the run's cadence.
    pub history_on_cadence: u64,
    /// The times of the frames on the run's cadence.
    pub frames_on_cadence: Vec<f64>,
    /// The time of the last frame written.
    last_frame_time: f64,
}

/// The columns of `history.csv`.
pub(crate) fn history_columns(model: &dyn Model) -> Vec<String> {
    let mut columns: Vec<String> = COMMON_COLUMNS.map(String::from).to_vec();
    columns.extend(model.history_columns());
    columns
}

/// The columns of `probes.csv`, when the model has probes.
pub(crate) fn probe_columns(model: &dyn Model) -> Option<Vec<String>> {
    let probes = model.probe_columns();
    (!probes.is_empty()).then(|| {
        let mut columns = vec!["t".to_string()];
        columns.extend(probes);
        columns
    })
}

/// Where a fresh or resumed run opens its files.
pub(crate) enum Opening<'a> {
    /// A fresh run.
    Fresh,
    /// A resumed run: the frames' times and the history and probes lengths at the checkpoint.
    Resume {
        times: &'a [f64],
        history_bytes: u64,
        probes_bytes: u64,
    },
}

impl Outputs {
    /// Opens the outputs on every process (agreed: an error on one is every process's).
    pub fn open(
        model: &dyn Model,
        options: &RunOptions,
        processes: &dyn Processes,
        opening: Opening<'_>,
    ) -> Result<Self, RunError> {
        let result = Self::open_here(model, options, processes, &opening);
        agree(processes, result)
    }

    fn open_here(
        model: &dyn Model,
        options: &RunOptions,
        processes: &dyn Processes,
        opening: &Opening<'_>,
    ) -> Result<Self, RunError> {
        let dir: &Path = &options.out_dir;
        let (rank, size) = (processes.rank(), processes.size());
        let frames: Box<dyn FrameSink> = match (options.format, processes.is_distributed()) {
            (SeriesFormat::VtkHdf(precision, deflate), true) => {
                let times = match opening {
                    Opening::Fresh => None,
                    Opening::Resume { times, .. } => Some(*times),
                };
                return Self::with_frames(
                    model,
                    options,
                    processes,
                    opening,
                    Frames::Gathered(Box::new(GatheredSeries::open(
                        dir,
                        &options.base,
                        precision,
                        deflate,
                        options.frame_capacity(model),
                        times,
                        processes,
                    )?)),
                );
            }
            (SeriesFormat::Pvd(compression), false) => match opening {
                Opening::Fresh => Box::new(
                    FrameSeries::create(dir, &options.base, compression)
                        .map_err(RunError::OutputLocation)?,
                ),
                Opening::Resume { times, .. } => Box::new(
                    FrameSeries::resume(dir, &options.base, compression, times)
                        .map_err(resume_error)?,
                ),
            },
            (SeriesFormat::Pvd(compression), true) => match opening {
                Opening::Fresh => Box::new(
                    PartitionedSeries::create(dir, &options.base, compression, rank, size)
                        .map_err(RunError::OutputLocation)?,
                ),
                Opening::Resume { times, .. } => Box::new(
                    PartitionedSeries::resume(dir, &options.base, compression, rank, size, times)
                        .map_err(resume_error)?,
                ),
            },
            (SeriesFormat::VtkHdf(precision, deflate), false) => {
                let capacity = options.frame_capacity(model);
                let mut series = match opening {
                    Opening::Fresh => VtkHdfSeries::create(dir, &options.base, precision, capacity)
                        .map_err(RunError::OutputLocation)?,
                    Opening::Resume { times, .. } => {
                        VtkHdfSeries::resume(dir, &options.base, precision, capacity, times)
                            .map_err(resume_error)?
                    }
                };
                series.set_deflate(deflate);
                Box::new(series)
            }
        };
        Self::with_frames(model, options, processes, opening, Frames::Own(frames))
    }

    /// The outputs around `frames`: the further series, history and probes.
    fn with_frames(
        model: &dyn Model,
        options: &RunOptions,
        processes: &dyn Processes,
        opening: &Opening<'_>,
        frames: Frames,
    ) -> Result<Self, RunError> {
        let dir: &Path = &options.out_dir;
        let rank = processes.rank();
        let extras = if processes.is_distributed() {
            Vec::new()
        } else {
            let compression = match options.format {
                SeriesFormat::Pvd(c) => c,
                _ => fem_io::Compression::default(),
            };
            let mut extras = Vec::new();
            for name in model.extra_series() {
                let base = format!("{}_{name}", options.base);
                extras.push(match opening {
                    Opening::Fresh => FrameSeries::create(dir, &base, compression)
                        .map_err(RunError::OutputLocation)?,
                    Opening::Resume { times, .. } => {
                        FrameSeries::resume(dir, &base, compression, times).map_err(resume_error)?
                    }
                });
            }
            extras
        };
        let columns = history_columns(model);
        let refs: Vec<&str> = columns.iter().map(String::as_str).collect();
        let probe_columns = probe_columns(model);
        let (history, probes) = if rank == 0 {
            let history_path = dir.join("history.csv");
            let probes_path = dir.join("probes.csv");
            match opening {
                Opening::Fresh => (
                    Some(
                        HistoryWriter::create(&history_path, &refs)
                            .map_err(RunError::OutputLocation)?,
                    ),
                    match &probe_columns {
                        None => None,
                        Some(c) => {
                            let refs: Vec<&str> = c.iter().map(String::as_str).collect();
                            Some(
                                HistoryWriter::create(&probes_path, &refs)
                                    .map_err(RunError::OutputLocation)?,
                            )
                        }
                    },
                ),
                Opening::Resume {
                    history_bytes,
                    probes_bytes,
                    ..
                } => (
                    Some(
                        HistoryWriter::resume(&history_path, &refs, *history_bytes)
                            .map_err(resume_error)?,
                    ),
                    match &probe_columns {
                        None => None,
                        Some(c) => {
                            let refs: Vec<&str> = c.iter().map(String::as_str).collect();
                            Some(
                                HistoryWriter::resume(&probes_path, &refs, *probes_bytes)
                                    .map_err(resume_error)?,
                            )
                        }
                    },
                ),
            }
        } else {
            (None, None)
        };
        let (history_on_cadence, frames_on_cadence) = match opening {
            Opening::Fresh => (0, Vec::new()),
            Opening::Resume {
                times,
                history_bytes,
                ..
            } => (*history_bytes, times.to_vec()),
        };
        Ok(Self {
            frames,
            extras,
            history,
            probes,
            has_probes: probe_columns.is_some(),
            values: Vec::new(),
            cells: Vec::new(),
            probe_row: Vec::new(),
            history_on_cadence,
            frames_on_cadence,
            last_frame_time: f64::NAN,
        })
    }

    /// Writes what is due at the model's current step — probes every step, a history row and
    /// a frame when asked — and observes the energy at a row. Collective (the energies and the
    /// frame of a distributed model are; failures are agreed).
    pub fn write(
        &mut self,
        model: &mut dyn Model,
        report: &StepReport,
        row: bool,
        frame: bool,
        energy: &mut EnergyTracker,
        processes: &dyn Processes,
    ) -> Result<(), RunError> {
        if self.has_probes {
            let result = self.write_probes(model);
            agree(processes, result)?;
        }
        if row {
            let result = self.write_row(model, report, energy);
            agree(processes, result)?;
        }
        if frame {
            if let Frames::Gathered(_) = self.frames {
                self.write_gathered(model, processes)?;
            } else {
                let result = self.write_frame(model);
                agree(processes, result)?;
            }
        }
        Ok(())
    }

    fn write_probes(&mut self, model: &dyn Model) -> Result<(), RunError> {
        let (t, step) = (model.stepper().time(), model.stepper().step_index());
        self.probe_row.clear();
        self.probe_row.push(t);
        model.probe_values(&mut self.probe_row);
        if self.probe_row.iter().any(|v| !v.is_finite()) {
            return Err(RunError::NonFinite {
                what: "probes".into(),
                step,
                t,
            });
        }
        if let Some(p) = self.probes.as_mut() {
            p.write_row(&self.probe_row)?;
        }
        Ok(())
    }

    fn write_row(
        &mut self,
        model: &dyn Model,
        report: &StepReport,
        energy_tracker: &mut EnergyTracker,
    ) -> Result<(), RunError> {
        let stepper = model.stepper();
        let (step, t) = (stepper.step_index(), stepper.time());
        let energy = model.energy();
        if let Some(e) = &energy {
            energy_tracker.observe(e);
        }
        self.values.clear();
        model.history_values(report, &mut self.values);
        self.cells.clear();
        self.cells.extend([Some(step as f64), Some(t)]);
        match energy {
            Some(e) => self
                .cells
                .extend([Some(e.kinetic), Some(e.potential), Some(e.total)]),
            None => self.cells.extend([None; 3]),
        }
        self.cells.extend(self.values.iter().map(|&v| Some(v)));
        if let Some(k) = self
            .cells
            .iter()
            .position(|c| c.is_some_and(|v| !v.is_finite()))
        {
            let columns = history_columns(model);
            return Err(RunError::NonFinite {
                what: format!("history column '{}'", columns[k]),
                step,
                t,
            });
        }
        if let Some(h) = self.history.as_mut() {
            h.write_row_with_gaps(&self.cells)?;
        }
        Ok(())
    }

    fn write_frame(&mut self, model: &mut dyn Model) -> Result<(), RunError> {
        let (t, step) = (model.stepper().time(), model.stepper().step_index());
        let frame = model.frame();
        if let Some(name) = frame.first_non_finite_field() {
            return Err(RunError::NonFinite {
                what: format!("frame field '{name}'"),
                step,
                t,
            });
        }
        let Frames::Own(sink) = &mut self.frames else {
            unreachable!("a gathered series is written by write_gathered")
        };
        sink.write_frame(t, &frame)?;
        for (k, extra) in self.extras.iter_mut().enumerate() {
            if let Some(frame) = model.extra_frame(k) {
                if let Some(name) = frame.first_non_finite_field() {
                    return Err(RunError::NonFinite {
                        what: format!("frame field '{name}' of series {k}"),
                        step,
                        t,
                    });
                }
                extra.write_frame(t, &frame)?;
            }
        }
        self.last_frame_time = t;
        Ok(())
    }

    /// Writes this process's part of the frame into the gathered series. Collective (the
    /// failures are agreed inside). A distributed run has no further series.
    fn write_gathered(
        &mut self,
        model: &mut dyn Model,
        processes: &dyn Processes,
    ) -> Result<(), RunError> {
        let (t, step) = (model.stepper().time(), model.stepper().step_index());
        let frame = model.frame();
        let checked = match frame.first_non_finite_field() {
            Some(name) => Err(RunError::NonFinite {
                what: format!("frame field '{name}'"),
                step,
                t,
            }),
            None => Ok(&frame),
        };
        let Frames::Gathered(series) = &mut self.frames else {
            unreachable!("called for a gathered series")
        };
        series.write(t, checked, processes)?;
        self.last_frame_time = t;
        Ok(())
    }

    /// Records what of the step just written an uninterrupted run would have written too.
    pub fn mark_cadence(&mut self, row: bool, frame: bool) {
        if row {
            self.history_on_cadence = self.history.as_ref().map_or(0, HistoryWriter::len);
        }
        if frame {
            self.frames_on_cadence.push(self.last_frame_time);
        }
    }

    /// The length of `probes.csv` now (0 without probes or off process 0).
    pub fn probes_len(&self) -> u64 {
        self.probes.as_ref().map_or(0, HistoryWriter::len)
    }
}

/// A problem with the files a resumed run continues: the checkpoint cannot be resumed (exit 2).
fn resume_error(e: OutputError) -> RunError {
    RunError::Checkpoint(fem_io::CheckpointError::Output(e))
}
