//! A process's part of a frame as bytes, for a distributed run whose frames one process writes
//! (the VTKHDF series of a run on several processes: every process sends its part to process 0,
//! which writes them as the parts of one step, [`crate::VtkHdfSeries::write_parts`]).
//!
//! [`encode_piece`] writes a [`Frame`] into a flat little-endian record; [`OwnedPiece::decode`]
//! reads it back into owned arrays that [`OwnedPiece::frame`] borrows as a `Frame` again, every
//! value bit for bit. The record is made and read by the same program on the processes of one
//! run; it is still read with every length checked (a damaged record is an error, never a
//! panic or an allocation beyond the record's own size).
//!
//! ```text
//! "FEMPIECE" u64 points  f64 × 3·points
//!            u64 cells   u8 × cells (VTK type codes)  u64 × cells (end offsets)
//!            u64 ids     u64 × ids (connectivity)
//!            u8 ghost?   u8 × points (vtkGhostType, when ghost? = 1)
//!            u64 point fields, u64 cell fields, then per field:
//!            u64 name length, name (UTF-8), u64 components, u64 values, f64 × values
//! ```

use fem_mesh::CellKind;
use vtkio::model::CellType;

use crate::vtu::{Field, Frame, VtkCells, vtk_type};

const MAGIC: &[u8; 8] = b"FEMPIECE";

/// Appends `frame` to `out` as a record [`OwnedPiece::decode`] reads.
pub fn encode_piece(frame: &Frame<'_>, out: &mut Vec<u8>) {
    let u = |out: &mut Vec<u8>, v: usize| out.extend((v as u64).to_le_bytes());
    out.extend(MAGIC);
    u(out, frame.points.len());
    for p in frame.points {
        for v in p {
            out.extend(v.to_le_bytes());
        }
    }
    let cells = frame.cells;
    u(out, cells.n_cells());
    out.extend(cells.type_codes());
    for &o in cells.offsets() {
        out.extend(o.to_le_bytes());
    }
    u(out, cells.connectivity().len());
    for &c in cells.connectivity() {
        out.extend(c.to_le_bytes());
    }
    match frame.ghost_points {
        Some(g) => {
            out.push(1);
            out.extend(g);
        }
        None => out.push(0),
    }
    u(out, frame.point_data.len());
    u(out, frame.cell_data.len());
    for f in frame.point_data.iter().chain(&frame.cell_data) {
        u(out, f.name.len());
        out.extend(f.name.as_bytes());
        u(out, f.n_components);
        u(out, f.values.len());
        for v in f.values {
            out.extend(v.to_le_bytes());
        }
    }
}

/// A frame read from a record of [`encode_piece`], owning its arrays.
#[derive(Clone, Debug, PartialEq)]
pub struct OwnedPiece {
    points: Vec<[f64; 3]>,
    cells: VtkCells,
    ghost: Option<Vec<u8>>,
    point_data: Vec<(String, usize, Vec<f64>)>,
    cell_data: Vec<(String, usize, Vec<f64>)>,
}

/// Reads a record front to back, every length checked against what is left.
struct Reader<'a> {
    bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], String> {
        if n > self.bytes.len() {
            return Err(format!(
                "the piece ends inside its {what} ({n} bytes expected, {} left)",
                self.bytes.len()
            ));
        }
        let (head, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        Ok(head)
    }

    fn count(&mut self, what: &str) -> Result<usize, String> {
        let b = self.take(8, what)?;
        let v = u64::from_le_bytes(b.try_into().expect("8 bytes"));
        // A count is of items of at least one byte each, all in the record.
        if v > self.bytes.len() as u64 {
            return Err(format!("the piece's {what} ({v}) exceeds the record"));
        }
        Ok(v as usize)
    }

    fn f64s(&mut self, n: usize, what: &str) -> Result<Vec<f64>, String> {
        let len = n
            .checked_mul(8)
            .ok_or_else(|| format!("the piece's {what} is too long"))?;
        Ok(self
            .take(len, what)?
            .chunks_exact(8)
            .map(|c| f64::from_le_bytes(c.try_into().expect("8 bytes")))
            .collect())
    }

    fn u64s(&mut self, n: usize, what: &str) -> Result<Vec<u64>, String> {
        let len = n
            .checked_mul(8)
            .ok_or_else(|| format!("the piece's {what} is too long"))?;
        Ok(self
            .take(len, what)?
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
            .collect())
    }
}

/// The VTK cell type of a type code this program writes.
fn cell_type(code: u8) -> Option<CellType> {
    CellKind::ALL
        .into_iter()
        .map(|k| vtk_type(k).0)
        .chain([CellType::PolyLine])
        .find(|&t| t as u8 == code)
}

impl OwnedPiece {
    /// Reads a record of [`encode_piece`].
    ///
    /// # Errors
    /// A message saying what is wrong with the record (short, an unknown cell type, a field
    /// whose length is not its count, bytes after the end).
    pub fn decode(bytes: &[u8]) -> Result<Self, String> {
        let mut r = Reader { bytes };
        if r.take(8, "header")? != MAGIC {
            return Err("not a frame piece".into());
        }
        let n_points = r.count("number of points")?;
        let coordinates = r.f64s(
            n_points
                .checked_mul(3)
                .ok_or("the piece's points are too many")?,
            "points",
        )?;
        let points = coordinates
            .chunks_exact(3)
            .map(|c| [c[0], c[1], c[2]])
            .collect();
        let n_cells = r.count("number of cells")?;
        let types = r
            .take(n_cells, "cell types")?
            .iter()
            .map(|&c| cell_type(c).ok_or_else(|| format!("unknown VTK cell type {c}")))
            .collect::<Result<Vec<_>, _>>()?;
        let offsets = r.u64s(n_cells, "cell offsets")?;
        let n_ids = r.count("connectivity length")?;
        let connectivity = r.u64s(n_ids, "connectivity")?;
        let cells = VtkCells::from_parts(types, offsets, connectivity)?;
        let ghost = match r.take(1, "ghost flag")?[0] {
            0 => None,
            1 => Some(r.take(n_points, "ghost flags")?.to_vec()),
            other => return Err(format!("ghost marker {other} is neither 0 nor 1")),
        };
        let n_point_fields = r.count("number of point fields")?;
        let n_cell_fields = r.count("number of cell fields")?;
        let mut fields = Vec::with_capacity(n_point_fields + n_cell_fields);
        for _ in 0..n_point_fields + n_cell_fields {
            let len = r.count("field name length")?;
            let name = std::str::from_utf8(r.take(len, "field name")?)
                .map_err(|_| "a field name is not UTF-8".to_string())?
                .to_string();
            let components = r.count("field components")?;
            let n = r.count("field length")?;
            let values = r.f64s(n, "field values")?;
            fields.push((name, components, values));
        }
        if !r.bytes.is_empty() {
            return Err(format!(
                "{} bytes after the end of the piece",
                r.bytes.len()
            ));
        }
        let cell_data = fields.split_off(n_point_fields);
        Ok(Self {
            points,
            cells,
            ghost,
            point_data: fields,
            cell_data,
        })
    }

    /// The frame, borrowing this piece's arrays.
    pub fn frame(&self) -> Frame<'_> {
        fn field((name, c, values): &(String, usize, Vec<f64>)) -> Field<'_> {
            Field::new(name, *c, values)
        }
        Frame {
            points: &self.points,
            cells: &self.cells,
            point_data: self.point_data.iter().map(field).collect(),
            cell_data: self.cell_data.iter().map(field).collect(),
            ghost_points: self.ghost.as_deref(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Points, cells, a point vector, a cell scalar, ghost flags.
    type Sample = (Vec<[f64; 3]>, VtkCells, Vec<f64>, Vec<f64>, Vec<u8>);

    fn sample() -> Sample {
        let points = vec![
            [0.0, 0.0, 0.0],
            [1.0, 0.0, 0.0],
            [1.0, 1.0, 0.0],
            [0.0, 1.0, -0.0],
            [0.1 + 0.2, f64::MIN_POSITIVE, 1e300],
        ];
        let mut cells = VtkCells::new();
        cells.push_block(CellKind::Quad4, &[0, 1, 2, 3]);
        cells.push_polyline(&[3, 4]);
        let u: Vec<f64> = (0..15).map(|i| (i as f64).sin()).collect();
        let j = vec![1.0 / 3.0, 2.0];
        (points, cells, u, j, vec![0, 1, 0, 0, 1])
    }

    #[test]
    fn a_piece_reads_back_bit_for_bit() {
        let (points, cells, u, j, ghost) = sample();
        let frame = Frame::new(&points, &cells)
            .with_point_field(Field::vector("displacement", &u))
            .with_cell_field(Field::scalar("J", &j))
            .with_ghost_points(&ghost);
        let mut bytes = Vec::new();
        encode_piece(&frame, &mut bytes);
        let piece = OwnedPiece::decode(&bytes).unwrap();
        let back = piece.frame();
        assert_eq!(back.points.len(), points.len());
        for (a, b) in back.points.iter().flatten().zip(points.iter().flatten()) {
            assert_eq!(a.to_bits(), b.to_bits());
        }
        assert_eq!(back.cells, &cells);
        assert_eq!(back.point_data, frame.point_data);
        assert_eq!(back.cell_data, frame.cell_data);
        assert_eq!(back.ghost_points, Some(&ghost[..]));
        // Encoded again: the same record.
        let mut again = Vec::new();
        encode_piece(&back, &mut again);
        assert_eq!(again, bytes);
    }

    #[test]
    fn a_damaged_piece_is_an_error_not_a_panic() {
        let (points, cells, u, _, _) = sample();
        let frame = Frame::new(&points, &cells).with_point_field(Field::vector("u", &u));
        let mut bytes = Vec::new();
        encode_piece(&frame, &mut bytes);
        // Every truncation, and a count made huge.
        for n in 0..bytes.len() {
            assert!(OwnedPiece::decode(&bytes[..n]).is_err(), "cut at {n}");
        }
        let mut huge = bytes.clone();
        huge[8..16].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(OwnedPiece::decode(&huge).unwrap_err().contains("exceeds"));
        let mut extra = bytes.clone();
        extra.push(0);
        assert!(OwnedPiece::decode(&extra).is_err());
        // A connectivity index past the points is caught when the frame is written, as for
        // any frame; an offset past the connectivity here.
        let n_points = points.len();
        let at = 8 + 8 + 24 * n_points + 8 + 2;
        let mut bad = bytes.clone();
        bad[at..at + 8].copy_from_slice(&99u64.to_le_bytes());
        assert!(OwnedPiece::decode(&bad).is_err());
    }
}
