//! ParaView collection (`.pvd`) files listing the frames of a time series.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::atomic::write_atomically;
use crate::{OutputError, format_f64};

/// One `<DataSet>` entry of a collection.
#[derive(Clone, Debug, PartialEq)]
struct Entry {
    time: f64,
    file: String,
}

/// A ParaView collection file:
///
/// ```xml
/// <?xml version="1.0"?>
/// <VTKFile type="Collection" version="0.1">
///   <Collection>
///     <DataSet timestep="0" group="" part="0" file="X_000000.vtu"/>
///   </Collection>
/// </VTKFile>
/// ```
///
/// The whole file is rewritten after every [`add`](Self::add) (into `X.pvd.tmp`, then renamed
/// over `X.pvd`), so an interrupted run always leaves a complete, openable collection listing
/// every frame added so far. Rewriting costs O(entries) per call, i.e. about 80 bytes per
/// frame: negligible next to writing a `.vtu` for up to tens of thousands of frames.
#[derive(Debug)]
pub struct PvdWriter {
    path: PathBuf,
    entries: Vec<Entry>,
    fsync: bool,
}

impl PvdWriter {
    /// Creates (or truncates to an empty collection) the `.pvd` file at `path`.
    ///
    /// # Errors
    /// [`OutputError::Io`] naming the file if it cannot be written (e.g. the directory does
    /// not exist).
    pub fn create(path: impl AsRef<Path>) -> Result<Self, OutputError> {
        let writer = PvdWriter {
            path: path.as_ref().to_path_buf(),
            entries: Vec::new(),
            fsync: false,
        };
        writer.rewrite()?;
        Ok(writer)
    }

    /// Rewrites the `.pvd` at `path` to list exactly `entries` (time, file) — a resumed run's
    /// frames so far.
    ///
    /// # Errors
    /// As [`create`](Self::create).
    pub fn resume(
        path: impl AsRef<Path>,
        entries: impl IntoIterator<Item = (f64, String)>,
    ) -> Result<Self, OutputError> {
        let writer = PvdWriter {
            path: path.as_ref().to_path_buf(),
            entries: entries
                .into_iter()
                .map(|(time, file)| Entry { time, file })
                .collect(),
            fsync: false,
        };
        writer.rewrite()?;
        Ok(writer)
    }

    /// The times of the entries, in order.
    pub fn times(&self) -> Vec<f64> {
        self.entries.iter().map(|e| e.time).collect()
    }

    /// Whether to `fsync` the temporary file before each rename (default `false`: the rename
    /// already protects against an interrupted process; fsync also protects against power
    /// loss, at some cost per frame).
    pub fn set_fsync(&mut self, fsync: bool) {
        self.fsync = fsync;
    }

    /// Appends a frame at `time` stored in `file` (a path relative to the `.pvd`'s directory,
    /// written as given; use `/` separators) and rewrites the collection atomically.
    ///
    /// # Errors
    /// [`OutputError::InvalidData`] for a non-finite time (the entry is not added);
    /// [`OutputError::Io`] if the file cannot be rewritten (the entry stays in memory and will
    /// be in the next successful rewrite).
    pub fn add(&mut self, time: f64, file: &str) -> Result<(), OutputError> {
        if !time.is_finite() {
            return Err(OutputError::invalid(
                &self.path,
                format!("time {time} of {file:?} is not finite"),
            ));
        }
        self.entries.push(Entry {
            time,
            file: file.to_string(),
        });
        self.rewrite()
    }

    /// The `.pvd` file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// `true` when no entry was added yet.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    fn rewrite(&self) -> Result<(), OutputError> {
        let mut text = String::with_capacity(128 + 80 * self.entries.len());
        text.push_str("<?xml version=\"1.0\"?>\n");
        text.push_str("<VTKFile type=\"Collection\" version=\"0.1\">\n");
        text.push_str("  <Collection>\n");
        for e in &self.entries {
            text.push_str("    <DataSet timestep=\"");
            text.push_str(&format_f64(e.time));
            text.push_str("\" group=\"\" part=\"0\" file=\"");
            escape_attr(&e.file, &mut text);
            text.push_str("\"/>\n");
        }
        text.push_str("  </Collection>\n");
        text.push_str("</VTKFile>\n");
        write_atomically(&self.path, self.fsync, |w, tmp| {
            w.write_all(text.as_bytes())
                .map_err(|e| OutputError::io("write", tmp, e))
        })
    }
}

/// Escapes `s` for a double-quoted XML attribute value.
fn escape_attr(s: &str, out: &mut String) {
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
}
