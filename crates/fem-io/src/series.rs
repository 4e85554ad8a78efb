//! A numbered series of `.vtu` frames kept in sync with a `.pvd` collection.

use std::path::{Path, PathBuf};

use crate::{Compression, Frame, OutputError, PvdWriter, write_vtu};

/// Writes `DIR/X_000000.vtu`, `DIR/X_000001.vtu`, … (frame index zero-padded to 6 digits,
/// more digits past 999999) and keeps `DIR/X.pvd` listing every frame written so far with its
/// time, each file replaced atomically.
///
/// A frame is listed in the `.pvd` only after its `.vtu` is complete, so an interrupted run
/// leaves a collection that opens in ParaView.
#[derive(Debug)]
pub struct FrameSeries {
    dir: PathBuf,
    base: String,
    compression: Compression,
    pvd: PvdWriter,
    next_index: usize,
}

impl FrameSeries {
    /// Creates `dir` (and its parents) if needed and starts an empty `dir/base.pvd`.
    ///
    /// # Errors
    /// [`OutputError::InvalidData`] if `base` is empty or contains a path separator;
    /// [`OutputError::Io`] naming the directory or file on a file-system error.
    pub fn create(
        dir: impl AsRef<Path>,
        base: &str,
        compression: Compression,
    ) -> Result<Self, OutputError> {
        let dir = dir.as_ref().to_path_buf();
        if base.is_empty() || base.contains(['/', '\\']) || base == "." || base == ".." {
            return Err(OutputError::invalid(
                &dir.join(format!("{base}.pvd")),
                format!("invalid base name {base:?} (must be a plain, non-empty file name)"),
            ));
        }
        std::fs::create_dir_all(&dir).map_err(|e| OutputError::io("create directory", &dir, e))?;
        let pvd = PvdWriter::create(dir.join(format!("{base}.pvd")))?;
        Ok(FrameSeries {
            dir,
            base: base.to_string(),
            compression,
            pvd,
            next_index: 0,
        })
    }

    /// Continues a series whose first frames (at `times`) are already in `dir`: rewrites the
    /// `.pvd` to list exactly those, and removes any later `X_NNNNNN.vtu` (written after the
    /// point the run resumes from).
    ///
    /// # Errors
    /// As [`create`](Self::create), and if a listed frame is missing.
    pub fn resume(
        dir: impl AsRef<Path>,
        base: &str,
        compression: Compression,
        times: &[f64],
    ) -> Result<Self, OutputError> {
        let mut series = Self::create(&dir, base, compression)?;
        for i in 0..times.len() {
            let path = series.dir.join(series.file_name(i));
            if !path.is_file() {
                return Err(OutputError::invalid(
                    &path,
                    "a frame the checkpoint lists is missing: the run cannot resume",
                ));
            }
        }
        let entries: Vec<(f64, String)> = times
            .iter()
            .enumerate()
            .map(|(i, &t)| (t, series.file_name(i)))
            .collect();
        series.pvd = PvdWriter::resume(series.pvd.path(), entries)?;
        series.next_index = times.len();
        series.remove_frames_from(times.len())?;
        Ok(series)
    }

    /// Removes `X_NNNNNN.vtu` files of this series' name with an index at or above `first`
    /// (frames of an earlier run into the same directory, or written after a checkpoint).
    ///
    /// # Errors
    /// [`OutputError::Io`] naming the directory or file.
    pub fn remove_frames_from(&self, first: usize) -> Result<usize, OutputError> {
        let prefix = format!("{}_", self.base);
        let entries =
            std::fs::read_dir(&self.dir).map_err(|e| OutputError::io("list", &self.dir, e))?;
        let mut removed = 0;
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(name) = name.to_str() else { continue };
            let Some(index) = name
                .strip_prefix(&prefix)
                .and_then(|rest| rest.strip_suffix(".vtu"))
                .filter(|d| d.len() >= 6 && d.bytes().all(|b| b.is_ascii_digit()))
                .and_then(|d| d.parse::<usize>().ok())
            else {
                continue;
            };
            if index >= first {
                let path = entry.path();
                std::fs::remove_file(&path).map_err(|e| OutputError::io("remove", &path, e))?;
                removed += 1;
            }
        }
        Ok(removed)
    }

    /// The times of the frames written so far.
    pub fn times(&self) -> Vec<f64> {
        self.pvd.times()
    }

    /// Writes the next frame as `DIR/X_NNNNNN.vtu`, then lists it in `DIR/X.pvd` at `time`.
    /// Returns the path of the `.vtu` written.
    ///
    /// # Errors
    /// Any [`OutputError`] of [`write_vtu`] or [`PvdWriter::add`]; on error the frame index
    /// is not advanced, so a retry overwrites the same file name.
    pub fn write_frame(&mut self, time: f64, frame: &Frame<'_>) -> Result<PathBuf, OutputError> {
        let name = self.file_name(self.next_index);
        let path = self.dir.join(&name);
        if !time.is_finite() {
            return Err(OutputError::invalid(
                &path,
                format!("time {time} is not finite"),
            ));
        }
        write_vtu(&path, frame, self.compression)?;
        self.pvd.add(time, &name)?;
        self.next_index += 1;
        Ok(path)
    }

    /// File name (without directory) of frame `index`: `X_000042.vtu`.
    pub fn file_name(&self, index: usize) -> String {
        format!("{}_{index:06}.vtu", self.base)
    }

    /// Path of the `.pvd` collection.
    pub fn pvd_path(&self) -> &Path {
        self.pvd.path()
    }

    /// Output directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Number of frames written so far (also the index of the next frame).
    pub fn n_frames(&self) -> usize {
        self.next_index
    }

    /// The compression used for the `.vtu` files.
    pub fn compression(&self) -> Compression {
        self.compression
    }

    /// Whether to `fsync` each `.pvd` rewrite (see [`PvdWriter::set_fsync`]).
    pub fn set_fsync(&mut self, fsync: bool) {
        self.pvd.set_fsync(fsync);
    }
}

/// How a run's frames are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SeriesFormat {
    /// `DIR/X.pvd` and one `DIR/X_NNNNNN.vtu` per frame ([`FrameSeries`]; on several
    /// processes, a piece per process and frame: [`PartitionedSeries`](crate::PartitionedSeries)).
    Pvd(Compression),
    /// One `DIR/X.vtkhdf` ([`VtkHdfSeries`](crate::VtkHdfSeries)): the precision of the
    /// fields, and the deflate level of their chunks (`None`: raw, contiguous fields;
    /// [`VtkHdfSeries::set_deflate`](crate::VtkHdfSeries::set_deflate)).
    VtkHdf(crate::Precision, Option<u32>),
}

impl Default for SeriesFormat {
    fn default() -> Self {
        SeriesFormat::Pvd(Compression::Lz4)
    }
}
