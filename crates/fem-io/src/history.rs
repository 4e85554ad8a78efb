//! CSV time histories (one row per recorded step).

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::{OutputError, format_f64};

/// Writes a CSV time history: a header line of column names, then one row of `f64` per call
/// to [`write_row`](Self::write_row).
///
/// * The header is written (and flushed) by [`create`](Self::create).
/// * Every row is flushed to the OS before `write_row` returns, so a killed run keeps all
///   rows written so far.
/// * Values use [`format_f64`]: the shortest text that parses back to the same `f64`.
///   Integral values (below 1e15 in magnitude) are written without a decimal point, so a
///   `step` column stored as `f64` reads as `0, 1, 2, …`; no separate integer type is needed.
/// * Column names containing `,`, `"` or line breaks are quoted per RFC 4180.
#[derive(Debug)]
pub struct HistoryWriter {
    path: PathBuf,
    columns: Vec<String>,
    n_columns: usize,
    out: BufWriter<File>,
    line: String,
    /// Bytes in the file so far (header included).
    len: u64,
}

impl HistoryWriter {
    /// Creates (truncating) the CSV file at `path` and writes the header `columns`.
    ///
    /// # Errors
    /// [`OutputError::InvalidData`] for an empty column list; [`OutputError::Io`] naming the
    /// file if it cannot be created or written.
    pub fn create(path: impl AsRef<Path>, columns: &[&str]) -> Result<Self, OutputError> {
        let path = path.as_ref().to_path_buf();
        if columns.is_empty() {
            return Err(OutputError::invalid(
                &path,
                "a history needs at least one column",
            ));
        }
        let file = File::create(&path).map_err(|e| OutputError::io("create", &path, e))?;
        let mut line = String::new();
        for (i, c) in columns.iter().enumerate() {
            if i > 0 {
                line.push(',');
            }
            push_csv_field(c, &mut line);
        }
        line.push('\n');
        let mut writer = HistoryWriter {
            path,
            columns: columns.iter().map(|c| c.to_string()).collect(),
            n_columns: columns.len(),
            out: BufWriter::new(file),
            line,
            len: 0,
        };
        writer.flush_line()?;
        Ok(writer)
    }

    /// Continues the history at `path` after its first `keep` bytes (what a checkpoint
    /// recorded): later rows, written after the checkpoint, are dropped. The header must be
    /// `columns`.
    ///
    /// # Errors
    /// [`OutputError::InvalidData`] if the file is shorter than `keep` or its header differs;
    /// [`OutputError::Io`] naming the file.
    pub fn resume(
        path: impl AsRef<Path>,
        columns: &[&str],
        keep: u64,
    ) -> Result<Self, OutputError> {
        let path = path.as_ref().to_path_buf();
        let metadata = std::fs::metadata(&path).map_err(|e| OutputError::io("read", &path, e))?;
        if !metadata.is_file() {
            return Err(OutputError::invalid(
                &path,
                "it is not a regular file (a device, a pipe or a folder stands there): the run cannot resume",
            ));
        }
        if metadata.len() < keep {
            return Err(OutputError::invalid(
                &path,
                format!(
                    "the history has {} bytes, fewer than the {keep} the checkpoint recorded",
                    metadata.len()
                ),
            ));
        }
        let mut header = String::new();
        for (i, c) in columns.iter().enumerate() {
            if i > 0 {
                header.push(',');
            }
            push_csv_field(c, &mut header);
        }
        header.push('\n');
        // Only the header is read: the rows past `keep` are cut, whatever their length.
        let mut start = vec![0u8; header.len()];
        let read = std::fs::File::open(&path)
            .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut start))
            .map(|()| start == header.as_bytes());
        if !matches!(read, Ok(true)) {
            return Err(OutputError::invalid(
                &path,
                "the history's columns are not this run's: the run cannot resume",
            ));
        }
        let file = std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .map_err(|e| OutputError::io("open", &path, e))?;
        file.set_len(keep)
            .map_err(|e| OutputError::io("truncate", &path, e))?;
        let mut file = file;
        std::io::Seek::seek(&mut file, std::io::SeekFrom::End(0))
            .map_err(|e| OutputError::io("seek", &path, e))?;
        Ok(HistoryWriter {
            path,
            columns: columns.iter().map(|c| c.to_string()).collect(),
            n_columns: columns.len(),
            out: BufWriter::new(file),
            line: String::new(),
            len: keep,
        })
    }

    /// Bytes written so far, header included.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether nothing (not even the header) was written.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Appends one row in which `None` is an empty cell (a value the writer does not have),
    /// and flushes it.
    ///
    /// # Errors
    /// As [`write_row`](Self::write_row).
    pub fn write_row_with_gaps(&mut self, values: &[Option<f64>]) -> Result<(), OutputError> {
        if values.len() != self.n_columns {
            return Err(OutputError::invalid(
                &self.path,
                format!(
                    "a row has {} values but the header has {} columns",
                    values.len(),
                    self.n_columns
                ),
            ));
        }
        self.line.clear();
        for (i, v) in values.iter().enumerate() {
            if i > 0 {
                self.line.push(',');
            }
            if let Some(v) = v {
                self.line.push_str(&format_f64(*v));
            }
        }
        self.line.push('\n');
        self.flush_line()
    }

    /// Appends one row and flushes it.
    ///
    /// # Errors
    /// [`OutputError::InvalidData`] if `values.len()` differs from the number of columns
    /// (nothing is written); [`OutputError::Io`] naming the file on a write error.
    pub fn write_row(&mut self, values: &[f64]) -> Result<(), OutputError> {
        if values.len() != self.n_columns {
            return Err(OutputError::invalid(
                &self.path,
                format!(
                    "a row has {} values but the header has {} columns",
                    values.len(),
                    self.n_columns
                ),
            ));
        }
        self.line.clear();
        for (i, &v) in values.iter().enumerate() {
            if i > 0 {
                self.line.push(',');
            }
            self.line.push_str(&format_f64(v));
        }
        self.line.push('\n');
        self.flush_line()
    }

    /// The CSV file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The column names.
    pub fn columns(&self) -> &[String] {
        &self.columns
    }

    /// Number of columns.
    pub fn n_columns(&self) -> usize {
        self.n_columns
    }

    fn flush_line(&mut self) -> Result<(), OutputError> {
        self.out
            .write_all(self.line.as_bytes())
            .and_then(|()| self.out.flush())
            .map_err(|e| OutputError::io("write", &self.path, e))?;
        self.len += self.line.len() as u64;
        Ok(())
    }
}

fn push_csv_field(s: &str, out: &mut String) {
    if s.contains([',', '"', '\n', '\r']) {
        out.push('"');
        out.push_str(&s.replace('"', "\"\""));
        out.push('"');
    } else {
        out.push_str(s);
    }
}
