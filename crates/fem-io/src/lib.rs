//! VTK `.vtu`/`.pvd` output and CSV time histories for `fem`.
//!
//! * [`vtu`]: one VTK XML UnstructuredGrid file per output frame ([`write_vtu`]), built from a
//!   borrowed [`Frame`] (points, [`VtkCells`], point and cell [`Field`]s), optionally compressed
//!   ([`Compression`]).
//! * [`pvd`]: a ParaView collection ([`PvdWriter`]) listing the frames with their times.
//! * [`series`]: [`FrameSeries`], the convenience the run driver uses: `DIR/X_000000.vtu`,
//!   `DIR/X_000001.vtu`, … kept in sync with `DIR/X.pvd`.
//! * [`piece`]: a process's part of a frame as bytes ([`encode_piece`], [`OwnedPiece`]), which
//!   a distributed run gathers on process 0 for its VTKHDF file.
//! * [`history`]: CSV time histories ([`HistoryWriter`]), flushed after every row.
//! * [`vtkhdf`]: one VTKHDF file per run ([`VtkHdfSeries`]).
//! * [`sink`]: [`FrameSink`], where a run's frames go: [`FrameSeries`], [`VtkHdfSeries`], or a
//!   distributed run's [`PartitionedSeries`]; [`SeriesFormat`] chooses between the first two.
//! * [`view`]: the ParaView view of a run ([`write_view`]: `X_view.py`, `X_scene.vtp`).
//! * [`plot`]: PNG and SVG plots of a history ([`plot::plot_history`]).
//!
//! Every file that is rewritten as a whole (`.vtu`, `.pvd`) is written to `NAME.tmp` in the
//! same directory and then renamed over `NAME`, so a half-written file never appears under its
//! final name. Every failure is an [`OutputError`] naming the file and the operation.
//!
//! ```no_run
//! use fem_io::{Compression, Field, Frame, FrameSeries, VtkCells};
//! # fn main() -> Result<(), fem_io::OutputError> {
//! let points = vec![[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [2.0, 0.0, 0.0]];
//! let mut cells = VtkCells::new();
//! cells.push_polyline(&[0, 1, 2]);
//! let mut series = FrameSeries::create("out", "string", Compression::Lz4)?;
//! let u = vec![0.0; 9];
//! let frame = Frame::new(&points, &cells).with_point_field(Field::vector("displacement", &u));
//! series.write_frame(0.0, &frame)?;
//! # Ok(())
//! # }
//! ```

mod atomic;
mod error;
mod hdf5;
mod numfmt;

pub mod checkpoint;
pub mod history;
pub mod piece;
pub mod plot;
pub mod pvd;
pub mod pvtu;
pub mod series;
pub mod sink;
pub mod view;
pub mod vtkhdf;
pub mod vtu;

pub use checkpoint::{Checkpoint, CheckpointArray, CheckpointError, fingerprint};
pub use error::OutputError;
pub use history::HistoryWriter;
pub use numfmt::format_f64;
pub use piece::{OwnedPiece, encode_piece};
pub use pvd::PvdWriter;
pub use pvtu::write_pvtu;
pub use series::{FrameSeries, SeriesFormat};
pub use sink::{FrameSink, PartitionedSeries, piece_name, pvtu_name};
pub use view::{Plane, Scene, View, look_across, up_against, write_view};
pub use vtkhdf::{Precision, VtkHdfSeries};
pub use vtu::{Compression, Field, Frame, VtkCells, write_vtu};
