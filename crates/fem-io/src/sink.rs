//! Where a run's frames go, as the run loop sees it: [`FrameSink`], implemented by the serial
//! series ([`crate::FrameSeries`]: one `.vtu` per frame and a `.pvd`), by the one-file series
//! ([`crate::VtkHdfSeries`]: one `.vtkhdf`) and by the series of a distributed run
//! ([`PartitionedSeries`]: one `.vtu` piece per process and frame, a `.pvtu` per frame and the
//! `.pvd`, both written by process 0).

use std::path::{Path, PathBuf};

use crate::{
    Compression, Frame, FrameSeries, OutputError, PvdWriter, VtkHdfSeries, write_pvtu, write_vtu,
};

/// A series of frames being written.
pub trait FrameSink {
    /// Writes `frame` (this process's part of it) at `time` and lists it.
    fn write_frame(&mut self, time: f64, frame: &Frame<'_>) -> Result<(), OutputError>;
    /// Frames written so far (also the index of the next).
    fn n_frames(&self) -> usize;
    /// The file a viewer opens (`X.pvd`, or `X.vtkhdf`).
    fn path(&self) -> &Path;
    /// Removes what an older run of the same name left in the directory past this series'
    /// frames, and the frames of an older run in the other format (called once, after the
    /// first frame of a fresh run).
    fn remove_stale(&self) -> Result<(), OutputError>;
    /// Waits until every frame given is written and listed (a series that writes in the
    /// background; called before a checkpoint and at the end of a run). Default: nothing to
    /// wait for.
    fn flush(&mut self) -> Result<(), OutputError> {
        Ok(())
    }
}

impl FrameSink for FrameSeries {
    fn write_frame(&mut self, time: f64, frame: &Frame<'_>) -> Result<(), OutputError> {
        FrameSeries::write_frame(self, time, frame).map(|_| ())
    }
    fn n_frames(&self) -> usize {
        FrameSeries::n_frames(self)
    }
    fn path(&self) -> &Path {
        self.pvd_path()
    }
    /// Later `X_NNNNNN.vtu` frames, and an older run's `X.vtkhdf`.
    fn remove_stale(&self) -> Result<(), OutputError> {
        self.remove_frames_from(self.n_frames())?;
        remove_file_if_any(&self.pvd_path().with_extension("vtkhdf"))
    }
}

impl FrameSink for VtkHdfSeries {
    fn write_frame(&mut self, time: f64, frame: &Frame<'_>) -> Result<(), OutputError> {
        VtkHdfSeries::write_frame(self, time, frame).map(|_| ())
    }
    fn n_frames(&self) -> usize {
        VtkHdfSeries::n_frames(self)
    }
    fn path(&self) -> &Path {
        VtkHdfSeries::path(self)
    }
    fn flush(&mut self) -> Result<(), OutputError> {
        VtkHdfSeries::flush(self)
    }
    /// An older run's `X.pvd` and its frames: `X_NNNNNN.vtu`, and a distributed run's
    /// `X_NNNNNN.pvtu` and pieces `X_NNNNNN_R.vtu`.
    fn remove_stale(&self) -> Result<(), OutputError> {
        let path = VtkHdfSeries::path(self);
        let base = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        remove_frame_files(self.dir(), &base, |rest| {
            if let Some(d) = rest.strip_suffix(".pvtu") {
                frame_index(d).is_some()
            } else if let Some(d) = rest.strip_suffix(".vtu") {
                match d.split_once('_') {
                    Some((d, r)) => frame_index(d).is_some() && digits(r).is_some(),
                    None => frame_index(d).is_some(),
                }
            } else {
                false
            }
        })?;
        remove_file_if_any(&path.with_extension("pvd"))
    }
}

/// The frames of a run on `size` processes: process `rank` writes its piece `X_NNNNNN_R.vtu` of
/// every frame; process 0 also writes `X_NNNNNN.pvtu`, which names the pieces, and keeps
/// `X.pvd` listing the `.pvtu` files. ParaView opens the `.pvd` as one dataset.
#[derive(Debug)]
pub struct PartitionedSeries {
    dir: PathBuf,
    base: String,
    compression: Compression,
    rank: usize,
    size: usize,
    /// Process 0's `.pvd`.
    pvd: Option<PvdWriter>,
    pvd_path: PathBuf,
    next_index: usize,
}

impl PartitionedSeries {
    /// Creates `dir` if needed; process 0 starts an empty `dir/base.pvd`.
    pub fn create(
        dir: impl AsRef<Path>,
        base: &str,
        compression: Compression,
        rank: usize,
        size: usize,
    ) -> Result<Self, OutputError> {
        let dir = dir.as_ref().to_path_buf();
        check_base(&dir, base)?;
        std::fs::create_dir_all(&dir).map_err(|e| OutputError::io("create directory", &dir, e))?;
        let pvd_path = dir.join(format!("{base}.pvd"));
        let pvd = match rank {
            0 => Some(PvdWriter::create(&pvd_path)?),
            _ => None,
        };
        Ok(Self {
            dir,
            base: base.to_string(),
            compression,
            rank,
            size,
            pvd,
            pvd_path,
            next_index: 0,
        })
    }

    /// Continues a series whose first frames (at `times`) are written: checks this process's
    /// pieces of them; process 0 rewrites the `.pvd` to list exactly those.
    pub fn resume(
        dir: impl AsRef<Path>,
        base: &str,
        compression: Compression,
        rank: usize,
        size: usize,
        times: &[f64],
    ) -> Result<Self, OutputError> {
        let mut series = Self::create(dir, base, compression, rank, size)?;
        for i in 0..times.len() {
            let path = series.dir.join(piece_name(base, i, rank));
            if !path.is_file() {
                return Err(OutputError::invalid(
                    &path,
                    "a frame the checkpoint lists is missing: the run cannot resume",
                ));
            }
        }
        if rank == 0 {
            let entries: Vec<(f64, String)> = times
                .iter()
                .enumerate()
                .map(|(i, &t)| (t, pvtu_name(base, i)))
                .collect();
            series.pvd = Some(PvdWriter::resume(&series.pvd_path, entries)?);
        }
        series.next_index = times.len();
        Ok(series)
    }
}

impl FrameSink for PartitionedSeries {
    fn write_frame(&mut self, time: f64, frame: &Frame<'_>) -> Result<(), OutputError> {
        let index = self.next_index;
        let piece = self.dir.join(piece_name(&self.base, index, self.rank));
        if !time.is_finite() {
            return Err(OutputError::invalid(
                &piece,
                format!("time {time} is not finite"),
            ));
        }
        write_vtu(&piece, frame, self.compression)?;
        if let Some(pvd) = self.pvd.as_mut() {
            let pieces: Vec<String> = (0..self.size)
                .map(|r| piece_name(&self.base, index, r))
                .collect();
            let name = pvtu_name(&self.base, index);
            write_pvtu(&self.dir.join(&name), frame, &pieces)?;
            pvd.add(time, &name)?;
        }
        self.next_index += 1;
        Ok(())
    }

    fn n_frames(&self) -> usize {
        self.next_index
    }

    fn path(&self) -> &Path {
        &self.pvd_path
    }

    /// On process 0: later `X_NNNNNN.pvtu` files and their pieces, pieces of processes this run
    /// does not have, the frames of a serial run (`X_NNNNNN.vtu`), which this run's `.pvd`
    /// no longer lists, and an older run's `X.vtkhdf`.
    fn remove_stale(&self) -> Result<(), OutputError> {
        if self.rank != 0 {
            return Ok(());
        }
        let first = self.next_index;
        remove_frame_files(&self.dir, &self.base, |rest| {
            if let Some(d) = rest.strip_suffix(".pvtu") {
                frame_index(d).is_some_and(|i| i >= first)
            } else if let Some(d) = rest.strip_suffix(".vtu") {
                match d.split_once('_') {
                    Some((d, r)) => match (frame_index(d), digits(r)) {
                        (Some(i), Some(r)) => i >= first || r >= self.size,
                        _ => false,
                    },
                    None => frame_index(d).is_some(),
                }
            } else {
                false
            }
        })?;
        remove_file_if_any(&self.pvd_path.with_extension("vtkhdf"))
    }
}

/// Removes the files `DIR/X_REST` for which `stale(REST)` holds.
fn remove_frame_files(
    dir: &Path,
    base: &str,
    stale: impl Fn(&str) -> bool,
) -> Result<(), OutputError> {
    let prefix = format!("{base}_");
    let entries = std::fs::read_dir(dir).map_err(|e| OutputError::io("list", dir, e))?;
    for entry in entries.flatten() {
        if !entry.file_type().is_ok_and(|t| t.is_file()) {
            continue;
        }
        let name = entry.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix(&prefix)) else {
            continue;
        };
        if stale(rest) {
            let path = entry.path();
            std::fs::remove_file(&path).map_err(|e| OutputError::io("remove", &path, e))?;
        }
    }
    Ok(())
}

/// Removes the file at `path`, if there is one (a folder of that name is left alone).
fn remove_file_if_any(path: &Path) -> Result<(), OutputError> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound && path.is_file() => {
            Err(OutputError::io("remove", path, e))
        }
        _ => Ok(()),
    }
}

/// Refuses a base name that is not a plain file name.
fn check_base(dir: &Path, base: &str) -> Result<(), OutputError> {
    if base.is_empty() || base.contains(['/', '\\']) || base == "." || base == ".." {
        return Err(OutputError::invalid(
            &dir.join(format!("{base}.pvd")),
            format!("invalid base name {base:?} (must be a plain, non-empty file name)"),
        ));
    }
    Ok(())
}

/// A frame index of at least six digits.
fn frame_index(d: &str) -> Option<usize> {
    (d.len() >= 6).then(|| digits(d)).flatten()
}

/// A non-empty run of decimal digits.
fn digits(d: &str) -> Option<usize> {
    (!d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
        .then(|| d.parse().ok())
        .flatten()
}

/// Process `rank`'s piece of frame `index`: `X_000042_3.vtu`.
pub fn piece_name(base: &str, index: usize, rank: usize) -> String {
    format!("{base}_{index:06}_{rank}.vtu")
}

/// The parallel file of frame `index`: `X_000042.pvtu`.
pub fn pvtu_name(base: &str, index: usize) -> String {
    format!("{base}_{index:06}.pvtu")
}
