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
        };
        writer.flush_line()?;
        Ok(writer)
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
            .map_err(|e| OutputError::io("write", &self.path, e))
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
