//! One VTK XML UnstructuredGrid (`.vtu`) file per output frame.
//!
//! The caller fills a [`VtkCells`] once (from a [`Mesh`], from [`CellBlock`]s in Gmsh node
//! order, and/or from polylines), then for every output step borrows the current points and
//! fields into a [`Frame`] and calls [`write_vtu`].
//!
//! Data are written by vtkio 0.7.0-rc2 as inline base64 `binary` `DataArray`s (vtkio does not
//! write `appended` data), little endian, `header_type="UInt64"`, optionally compressed block
//! by block with LZ4 or zlib ([`Compression`]). Points and fields are `Float64`, connectivity
//! and offsets `UInt64`, cell types `UInt8`.
//!
//! # Node ordering (Gmsh → VTK)
//!
//! Connectivity given with [`VtkCells::push_block`] / [`VtkCells::from_mesh`] is in Gmsh's
//! local node order and is permuted to VTK's here, in one place ([`gmsh_to_vtk`]):
//!
//! | `CellKind` | VTK cell type               | VTK node `i` = Gmsh node `perm[i]` |
//! |------------|-----------------------------|------------------------------------|
//! | `Vertex`   | `VTK_VERTEX` (1)            | identity                           |
//! | `Line2`    | `VTK_LINE` (3)              | identity                           |
//! | `Line3`    | `VTK_QUADRATIC_EDGE` (21)   | identity (0, 1 ends; 2 midpoint)   |
//! | `Tri3`     | `VTK_TRIANGLE` (5)          | identity                           |
//! | `Tri6`     | `VTK_QUADRATIC_TRIANGLE` (22) | identity (3, 4, 5 on edges 0–1, 1–2, 2–0 in both) |
//! | `Quad4`    | `VTK_QUAD` (9)              | identity                           |
//! | `Tet4`     | `VTK_TETRA` (10)            | identity                           |
//! | `Tet10`    | `VTK_QUADRATIC_TETRA` (24)  | `[0, 1, 2, 3, 4, 5, 6, 7, 9, 8]`   |
//! | `Hex8`     | `VTK_HEXAHEDRON` (12)       | identity                           |
//! | `Quad8`    | `VTK_QUADRATIC_QUAD` (23)   | identity (4..7 on edges 0–1, 1–2, 2–3, 3–0 in both) |
//! | `Quad9`    | `VTK_BIQUADRATIC_QUAD` (28) | identity (8 the centre)            |
//! | `Hex20`    | `VTK_QUADRATIC_HEXAHEDRON` (25) | `[0..7, 8, 11, 13, 9, 16, 18, 19, 17, 10, 12, 14, 15]` |
//! | `Hex27`    | `VTK_TRIQUADRATIC_HEXAHEDRON` (29) | hex20's, then `[22, 23, 21, 24, 20, 25, 26]` |
//!
//! Tet10: both put the 4 vertices first and then one mid-edge node per edge, but the edge
//! orders differ. Gmsh numbers the mid-edge nodes 4..9 on edges (0,1), (1,2), (2,0), (0,3),
//! (2,3), (1,3) (Gmsh reference manual, "Node ordering"); VTK's `vtkQuadraticTetra` on edges
//! (0,1), (1,2), (2,0), (0,3), (1,3), (2,3). So VTK node 8 (edge 1–3) is Gmsh node 9 and VTK
//! node 9 (edge 2–3) is Gmsh node 8: a swap of the last two nodes.
//!
//! [`Mesh`]: fem_mesh::Mesh
//! [`CellBlock`]: fem_mesh::CellBlock

use std::collections::HashSet;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use fem_mesh::{CellKind, Mesh};
use vtkio::model::{
    Attribute, Attributes, ByteOrder, CellType, Cells, DataArray, DataSet, ElementType, IOBuffer,
    UnstructuredGridPiece, Version, VertexNumbers, Vtk,
};
use vtkio::xml::Compressor;

use crate::OutputError;
use crate::atomic::write_atomically;

/// Compression of the binary data arrays in a `.vtu` file.
///
/// Rough timings on this project's 2-core machine for a 1e6-cell `Line2` frame with two
/// 3-component point fields (`examples/bench_write.rs`): `None` 1.1–1.9 s / 129 MB, `Lz4`
/// 0.4–0.5 s / 51 MB, `Zlib` 5.5–6.1 s / 29 MB. With vtkio 0.7.0-rc2 the uncompressed path is
/// slower than LZ4 (it converts element by element and writes 2.5× the bytes), so
/// [`Compression::Lz4`] is the sensible default; VTK/ParaView read LZ4 since VTK 8.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Compression {
    /// Uncompressed (base64-encoded raw bytes).
    #[default]
    None,
    /// `vtkLZ4DataCompressor`: fast, moderate ratio.
    Lz4,
    /// `vtkZLibDataCompressor` at level 5 (VTK's default level): slower, smaller.
    Zlib,
}

impl Compression {
    /// vtkio's compressor and level for this choice. vtkio treats level 0 as "no
    /// compression", so LZ4 (which has no levels in vtkio) is given level 1.
    fn vtkio(self) -> (Compressor, u32) {
        match self {
            Compression::None => (Compressor::None, 0),
            Compression::Lz4 => (Compressor::LZ4, 1),
            Compression::Zlib => (Compressor::ZLib, 5),
        }
    }
}

/// The VTK cell type code of a mesh cell kind and the Gmsh → VTK local node permutation:
/// VTK local node `i` is Gmsh local node `perm[i]`. See the [module docs](self) for the table
/// and the derivation of the `Tet10` permutation.
pub fn gmsh_to_vtk(kind: CellKind) -> (u8, &'static [usize]) {
    let (ty, perm) = vtk_type(kind);
    (ty as u8, perm)
}

/// The single place where the Gmsh → VTK mapping is defined.
fn vtk_type(kind: CellKind) -> (CellType, &'static [usize]) {
    const ID1: &[usize] = &[0];
    const ID2: &[usize] = &[0, 1];
    const ID3: &[usize] = &[0, 1, 2];
    const ID4: &[usize] = &[0, 1, 2, 3];
    const ID6: &[usize] = &[0, 1, 2, 3, 4, 5];
    const ID8: &[usize] = &[0, 1, 2, 3, 4, 5, 6, 7];
    // Mid-edge nodes 8, 9 sit on Gmsh edges (2,3), (1,3) but on VTK edges (1,3), (2,3).
    const TET10: &[usize] = &[0, 1, 2, 3, 4, 5, 6, 7, 9, 8];
    const ID9: &[usize] = &[0, 1, 2, 3, 4, 5, 6, 7, 8];
    // Hex20/hex27: VTK numbers the mid-edge nodes by edges (0,1), (1,2), (2,3), (3,0), (4,5),
    // (5,6), (6,7), (7,4), (0,4), (1,5), (2,6), (3,7), and the face centres x−, x+, y−, y+, z−,
    // z+ (checked against VTK's parametric coordinates); Gmsh's orders are in
    // `fem_mesh::CellKind::reference_nodes`.
    const HEX20: &[usize] = &[
        0, 1, 2, 3, 4, 5, 6, 7, 8, 11, 13, 9, 16, 18, 19, 17, 10, 12, 14, 15,
    ];
    const HEX27: &[usize] = &[
        0, 1, 2, 3, 4, 5, 6, 7, 8, 11, 13, 9, 16, 18, 19, 17, 10, 12, 14, 15, 22, 23, 21, 24, 20,
        25, 26,
    ];
    match kind {
        CellKind::Vertex => (CellType::Vertex, ID1),
        CellKind::Line2 => (CellType::Line, ID2),
        CellKind::Line3 => (CellType::QuadraticEdge, ID3),
        CellKind::Tri3 => (CellType::Triangle, ID3),
        CellKind::Tri6 => (CellType::QuadraticTriangle, ID6),
        CellKind::Quad4 => (CellType::Quad, ID4),
        CellKind::Tet4 => (CellType::Tetra, ID4),
        CellKind::Tet10 => (CellType::QuadraticTetra, TET10),
        CellKind::Hex8 => (CellType::Hexahedron, ID8),
        CellKind::Quad8 => (CellType::QuadraticQuad, ID8),
        CellKind::Quad9 => (CellType::BiquadraticQuad, ID9),
        CellKind::Hex20 => (CellType::QuadraticHexahedron, HEX20),
        CellKind::Hex27 => (CellType::TriquadraticHexahedron, HEX27),
    }
}

/// The cells of a frame in VTK layout (VTK node order, flat connectivity, end offsets, type
/// codes). Build it once per mesh (or per refinement) and reuse it for every frame.
///
/// Pushing never fails; malformed input (a block whose connectivity length is not a multiple
/// of the cell's node count, an empty polyline) is remembered and reported by [`write_vtu`]
/// as [`OutputError::InvalidData`] naming the file. Node indices are checked against the
/// frame's point count at write time too.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct VtkCells {
    types: Vec<CellType>,
    offsets: Vec<u64>,
    connectivity: Vec<u64>,
    error: Option<String>,
}

impl VtkCells {
    /// No cells.
    pub fn new() -> Self {
        Self::default()
    }

    /// All cell blocks of `mesh`, in block order (cell `k` of the file is the `k`-th cell
    /// counting through the blocks in order, as in [`Mesh::n_cells`]).
    pub fn from_mesh(mesh: &Mesh) -> Self {
        let mut cells = Self::new();
        for block in &mesh.blocks {
            cells.push_block(block.kind, &block.connectivity);
        }
        cells
    }

    /// Appends cells of one `kind` given by flat, 0-based `connectivity` in **Gmsh** local
    /// node order (as in [`fem_mesh::CellBlock`]); it is permuted to VTK order.
    pub fn push_block(&mut self, kind: CellKind, connectivity: &[usize]) {
        let (ty, perm) = vtk_type(kind);
        let n = perm.len();
        if !connectivity.len().is_multiple_of(n) {
            self.record_error(format!(
                "a {kind:?} block has {} node indices, not a multiple of {n}",
                connectivity.len()
            ));
        }
        let n_cells = connectivity.len() / n;
        self.types.reserve(n_cells);
        self.offsets.reserve(n_cells);
        self.connectivity.reserve(n_cells * n);
        for cell in connectivity.chunks_exact(n) {
            self.connectivity
                .extend(perm.iter().map(|&g| cell[g] as u64));
            self.offsets.push(self.connectivity.len() as u64);
            self.types.push(ty);
        }
    }

    /// Appends one `VTK_POLY_LINE` cell through `nodes` (0-based point indices), e.g. a
    /// string or beam drawn as one curve, or a refined quadratic element.
    pub fn push_polyline(&mut self, nodes: &[usize]) {
        if nodes.is_empty() {
            self.record_error("an empty polyline was pushed".to_string());
            return;
        }
        self.connectivity.extend(nodes.iter().map(|&i| i as u64));
        self.offsets.push(self.connectivity.len() as u64);
        self.types.push(CellType::PolyLine);
    }

    /// Number of cells.
    pub fn n_cells(&self) -> usize {
        self.types.len()
    }

    /// `true` when there are no cells.
    pub fn is_empty(&self) -> bool {
        self.types.is_empty()
    }

    /// VTK cell type codes (`VTK_LINE` = 3, `VTK_QUADRATIC_TETRA` = 24, …), one per cell.
    pub fn type_codes(&self) -> Vec<u8> {
        self.types.iter().map(|&t| t as u8).collect()
    }

    /// Flat connectivity in VTK node order.
    pub fn connectivity(&self) -> &[u64] {
        &self.connectivity
    }

    /// End offset of each cell into [`connectivity`](Self::connectivity).
    pub fn offsets(&self) -> &[u64] {
        &self.offsets
    }

    fn record_error(&mut self, message: String) {
        if self.error.is_none() {
            self.error = Some(message);
        }
    }
}

/// A named field of `f64` values, `n_components` per point (or per cell), interleaved
/// (`[x0, y0, z0, x1, y1, z1, …]` for a vector).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Field<'a> {
    /// Array name shown in ParaView (`"displacement"`, `"velocity"`, …).
    pub name: &'a str,
    /// Components per tuple: 1 (scalar), 3 (vector), 9 (3×3 tensor, row major) or any other
    /// positive count (written as a generic array).
    pub n_components: usize,
    /// `n_components × n` values, `n` = number of points (point data) or cells (cell data).
    pub values: &'a [f64],
}

impl<'a> Field<'a> {
    /// A field with `n_components` values per tuple.
    pub fn new(name: &'a str, n_components: usize, values: &'a [f64]) -> Self {
        Field {
            name,
            n_components,
            values,
        }
    }

    /// One value per tuple.
    pub fn scalar(name: &'a str, values: &'a [f64]) -> Self {
        Self::new(name, 1, values)
    }

    /// Three components per tuple, written as a 3-component array (so ParaView's
    /// *Warp By Vector* can use it).
    pub fn vector(name: &'a str, values: &'a [f64]) -> Self {
        Self::new(name, 3, values)
    }

    /// Nine components per tuple (3×3 tensor, row major).
    pub fn tensor(name: &'a str, values: &'a [f64]) -> Self {
        Self::new(name, 9, values)
    }
}

/// Everything one `.vtu` file shows, borrowed from the caller: points (possibly deformed or
/// refined, not necessarily the mesh's), cells, and point and cell fields.
#[derive(Clone, Debug)]
pub struct Frame<'a> {
    /// Point coordinates.
    pub points: &'a [[f64; 3]],
    /// Cells referring to `points` by 0-based index.
    pub cells: &'a VtkCells,
    /// Point data: each field has `n_components × points.len()` values. The first
    /// 3-component field is marked as the active vectors (`<PointData Vectors="name">`), which
    /// ParaView's *Warp By Vector* picks by default: push `displacement` first. Likewise the
    /// first scalar and first 9-component field become the active scalars and tensors.
    pub point_data: Vec<Field<'a>>,
    /// Cell data: each field has `n_components × cells.n_cells()` values.
    pub cell_data: Vec<Field<'a>>,
    /// VTK's ghost flags of the points (`vtkGhostType`, one byte per point: 1 marks a copy of
    /// a point another piece owns, so ParaView draws no seam between the pieces of a
    /// distributed run); `None` writes no such array.
    pub ghost_points: Option<&'a [u8]>,
}

impl<'a> Frame<'a> {
    /// A frame with no fields.
    pub fn new(points: &'a [[f64; 3]], cells: &'a VtkCells) -> Self {
        Frame {
            points,
            cells,
            point_data: Vec::new(),
            cell_data: Vec::new(),
            ghost_points: None,
        }
    }

    /// Marks points as ghosts (`vtkGhostType`: 1 for a duplicated point another piece owns,
    /// 0 for an owned point), one byte per point.
    pub fn with_ghost_points(mut self, flags: &'a [u8]) -> Self {
        self.ghost_points = Some(flags);
        self
    }

    /// Adds a point-data field.
    pub fn with_point_field(mut self, field: Field<'a>) -> Self {
        self.point_data.push(field);
        self
    }

    /// Adds a cell-data field.
    pub fn with_cell_field(mut self, field: Field<'a>) -> Self {
        self.cell_data.push(field);
        self
    }

    /// The name of the first field (or `points`) holding a value that is not finite.
    pub fn first_non_finite_field(&self) -> Option<&'a str> {
        if self.points.iter().flatten().any(|v| !v.is_finite()) {
            return Some("points");
        }
        self.point_data
            .iter()
            .chain(&self.cell_data)
            .find(|f| f.values.iter().any(|v| !v.is_finite()))
            .map(|f| f.name)
    }

    /// Checks lengths, indices and names; the message says what is wrong.
    pub(crate) fn validate(&self) -> Result<(), String> {
        if let Some(e) = &self.cells.error {
            return Err(e.clone());
        }
        let n_points = self.points.len();
        if let Some(&bad) = self
            .cells
            .connectivity
            .iter()
            .find(|&&i| i >= n_points as u64)
        {
            return Err(format!(
                "a cell refers to point {bad} but the frame has {n_points} points"
            ));
        }
        if let Some(g) = self.ghost_points
            && g.len() != n_points
        {
            return Err(format!(
                "the ghost flags have {} values but the frame has {n_points} points",
                g.len()
            ));
        }
        check_fields("point", &self.point_data, n_points)?;
        check_fields("cell", &self.cell_data, self.cells.n_cells())
    }
}

fn check_fields(what: &str, fields: &[Field<'_>], n: usize) -> Result<(), String> {
    let mut names = HashSet::new();
    for f in fields {
        if f.name.is_empty() {
            return Err(format!("a {what} field has an empty name"));
        }
        if !names.insert(f.name) {
            return Err(format!("two {what} fields are named {:?}", f.name));
        }
        if f.n_components == 0 {
            return Err(format!("{what} field {:?} has 0 components", f.name));
        }
        if Some(f.values.len()) != f.n_components.checked_mul(n) {
            return Err(format!(
                "{what} field {:?} has {} values, expected {} components x {n} {what}s",
                f.name,
                f.values.len(),
                f.n_components
            ));
        }
    }
    Ok(())
}

fn attribute(f: &Field<'_>) -> Attribute {
    let elem = match f.n_components {
        1 => ElementType::Scalars {
            num_comp: 1,
            lookup_table: None,
        },
        3 => ElementType::Vectors,
        9 => ElementType::Tensors,
        n => ElementType::Generic(n as u32),
    };
    Attribute::DataArray(DataArray {
        name: f.name.to_string(),
        elem,
        data: IOBuffer::F64(f.values.to_vec()),
    })
}

/// Writes `frame` to the `.vtu` file `path` (through `path.tmp` + rename, so `path` is either
/// the previous file or the complete new one).
///
/// # Errors
/// [`OutputError::InvalidData`] if the frame is inconsistent (nothing is written),
/// [`OutputError::Vtk`] if vtkio fails to encode it, [`OutputError::Io`] on any file error,
/// e.g. a nonexistent directory. All name the file.
pub fn write_vtu(
    path: impl AsRef<Path>,
    frame: &Frame<'_>,
    compression: Compression,
) -> Result<(), OutputError> {
    let path = path.as_ref();
    frame
        .validate()
        .map_err(|m| OutputError::invalid(path, m))?;

    let mut points = Vec::with_capacity(3 * frame.points.len());
    for p in frame.points {
        points.extend_from_slice(p);
    }
    let piece = UnstructuredGridPiece {
        points: IOBuffer::F64(points),
        cells: Cells {
            cell_verts: VertexNumbers::XML {
                connectivity: frame.cells.connectivity.clone(),
                offsets: frame.cells.offsets.clone(),
            },
            types: frame.cells.types.clone(),
        },
        data: Attributes {
            point: frame
                .point_data
                .iter()
                .map(attribute)
                .chain(frame.ghost_points.map(|g| {
                    Attribute::DataArray(DataArray {
                        name: "vtkGhostType".to_string(),
                        elem: ElementType::Scalars {
                            num_comp: 1,
                            lookup_table: None,
                        },
                        data: IOBuffer::U8(g.to_vec()),
                    })
                }))
                .collect(),
            cell: frame.cell_data.iter().map(attribute).collect(),
        },
    };
    let vtk = Vtk {
        version: Version::new_xml(1, 0),
        title: String::new(),
        byte_order: ByteOrder::LittleEndian,
        data: DataSet::inline(piece),
        file_path: None,
    };
    let (compressor, level) = compression.vtkio();
    let xml = vtk
        .try_into_xml_format(compressor, level)
        .map_err(|e| OutputError::Vtk {
            op: "encode VTK data for",
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;

    if frame.points.is_empty() {
        // vtkio leaves out a piece's `NumberOfPoints` and `NumberOfCells` when they are zero,
        // which VTK's reader refuses ("Piece 0 is missing its NumberOfPoints attribute"): an
        // empty frame (a series of contact points at a step without contact) gets them
        // written here.
        let mut bytes: Vec<u8> = Vec::new();
        xml.write(&mut bytes).map_err(|e| OutputError::Vtk {
            op: "serialize VTK XML for",
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        let text = String::from_utf8_lossy(&bytes).replacen(
            "<Piece>",
            "<Piece NumberOfPoints=\"0\" NumberOfCells=\"0\">",
            1,
        );
        return write_atomically(path, false, |w, tmp| {
            use std::io::Write;
            w.write_all(text.as_bytes())
                .map_err(|e| OutputError::io("write", tmp, e))
        });
    }
    write_atomically(path, false, |w, tmp| {
        // vtkio's serializer wraps the writer in its own `BufWriter`, which it drops without
        // checking the final flush, and uses `write` rather than `write_all`. `CheckedWriter`
        // makes every write complete and remembers the first I/O error, so none is lost.
        let mut checked = CheckedWriter {
            inner: w,
            error: None,
        };
        let result = xml.write(&mut checked);
        if let Some(e) = checked.error {
            return Err(OutputError::io("write", tmp, e));
        }
        result.map_err(|e| OutputError::Vtk {
            op: "serialize VTK XML to",
            path: tmp.to_path_buf(),
            message: e.to_string(),
        })
    })
}

/// A `Write` adapter that turns every `write` into `write_all` and keeps the first error.
struct CheckedWriter<'w> {
    inner: &'w mut BufWriter<File>,
    error: Option<std::io::Error>,
}

impl Write for CheckedWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.error.is_some() {
            return Err(std::io::Error::other("an earlier write failed"));
        }
        match self.inner.write_all(buf) {
            Ok(()) => Ok(buf.len()),
            Err(e) => {
                let kind = e.kind();
                self.error = Some(e);
                Err(std::io::Error::new(kind, "write failed"))
            }
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if self.error.is_some() {
            return Err(std::io::Error::other("an earlier write failed"));
        }
        self.inner.flush().inspect_err(|e| {
            self.error = Some(std::io::Error::new(e.kind(), e.to_string()));
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_frame_names_its_zero_points_and_cells() {
        let dir = std::env::temp_dir().join(format!("fem-io-empty-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("empty.vtu");
        let cells = VtkCells::new();
        let frame = Frame::new(&[], &cells).with_point_field(Field::scalar("gap", &[]));
        for compression in [Compression::None, Compression::Lz4] {
            write_vtu(&path, &frame, compression).unwrap();
            let text = std::fs::read_to_string(&path).unwrap();
            assert!(
                text.contains(r#"<Piece NumberOfPoints="0" NumberOfCells="0">"#),
                "{text}"
            );
            assert!(text.contains(r#"Name="gap""#), "{text}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn tet10_swaps_last_two_nodes() {
        let (code, perm) = gmsh_to_vtk(CellKind::Tet10);
        assert_eq!(code, 24);
        assert_eq!(perm, &[0, 1, 2, 3, 4, 5, 6, 7, 9, 8]);
        let mut cells = VtkCells::new();
        cells.push_block(CellKind::Tet10, &[10, 11, 12, 13, 14, 15, 16, 17, 18, 19]);
        assert_eq!(
            cells.connectivity(),
            &[10, 11, 12, 13, 14, 15, 16, 17, 19, 18]
        );
        assert_eq!(cells.offsets(), &[10]);
    }

    #[test]
    fn second_order_hexahedra_map_to_vtk_positions() {
        // VTK's parametric coordinates of vtkTriQuadraticHexahedron (on [-1, 1]³): mid-edge
        // nodes on edges (0,1), (1,2), (2,3), (3,0), (4,5), (5,6), (6,7), (7,4), (0,4), (1,5),
        // (2,6), (3,7), then the face centres x−, x+, y−, y+, z−, z+ and the centre.
        let corners = &CellKind::Hex8.reference_nodes()[..8];
        let mid = |a: usize, b: usize| -> [f64; 3] {
            std::array::from_fn(|k| 0.5 * (corners[a][k] + corners[b][k]))
        };
        let mut vtk: Vec<[f64; 3]> = corners.to_vec();
        for (a, b) in [
            (0, 1),
            (1, 2),
            (2, 3),
            (3, 0),
            (4, 5),
            (5, 6),
            (6, 7),
            (7, 4),
            (0, 4),
            (1, 5),
            (2, 6),
            (3, 7),
        ] {
            vtk.push(mid(a, b));
        }
        for axis in 0..3 {
            for side in [-1.0, 1.0] {
                let mut p = [0.0; 3];
                p[axis] = side;
                vtk.push(p);
            }
        }
        vtk.push([0.0; 3]);
        let gmsh = CellKind::Hex27.reference_nodes();
        let (_, perm) = gmsh_to_vtk(CellKind::Hex27);
        for (i, &g) in perm.iter().enumerate() {
            assert_eq!(gmsh[g], vtk[i], "VTK node {i}");
        }
        let (_, perm20) = gmsh_to_vtk(CellKind::Hex20);
        assert_eq!(perm20, &perm[..20]);
    }

    #[test]
    fn every_kind_maps_to_a_vtk_cell_with_its_node_count() {
        use CellKind::*;
        for (kind, code) in [
            (Vertex, 1),
            (Line2, 3),
            (Line3, 21),
            (Tri3, 5),
            (Tri6, 22),
            (Quad4, 9),
            (Tet4, 10),
            (Tet10, 24),
            (Hex8, 12),
            (Quad8, 23),
            (Quad9, 28),
            (Hex20, 25),
            (Hex27, 29),
        ] {
            let (c, perm) = gmsh_to_vtk(kind);
            assert_eq!(c, code, "{kind:?}");
            assert_eq!(perm.len(), kind.n_nodes(), "{kind:?}");
            let mut sorted = perm.to_vec();
            sorted.sort_unstable();
            assert_eq!(sorted, (0..perm.len()).collect::<Vec<_>>(), "{kind:?}");
        }
    }

    #[test]
    fn malformed_cells_are_reported_with_the_path() {
        let points = [[0.0; 3]; 3];
        let mut cells = VtkCells::new();
        cells.push_block(CellKind::Line2, &[0, 1, 2]);
        let dir = std::env::temp_dir();
        let path = dir.join("fem_io_malformed_never_written.vtu");
        let err = write_vtu(&path, &Frame::new(&points, &cells), Compression::None).unwrap_err();
        assert!(matches!(err, OutputError::InvalidData { .. }));
        assert_eq!(err.path(), path);
        assert!(
            err.to_string()
                .contains("fem_io_malformed_never_written.vtu")
        );
        assert!(!path.exists());

        let mut cells = VtkCells::new();
        cells.push_block(CellKind::Line2, &[0, 3]);
        let err = write_vtu(&path, &Frame::new(&points, &cells), Compression::None).unwrap_err();
        assert!(err.to_string().contains("point 3"), "{err}");

        let mut cells = VtkCells::new();
        cells.push_block(CellKind::Line2, &[0, 1]);
        let u = [0.0; 8];
        let frame = Frame::new(&points, &cells).with_point_field(Field::vector("u", &u));
        let err = write_vtu(&path, &frame, Compression::None).unwrap_err();
        assert!(err.to_string().contains("\"u\""), "{err}");
        assert!(!path.exists());
    }
}
