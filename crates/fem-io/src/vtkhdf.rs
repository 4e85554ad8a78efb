//! One VTKHDF file per run: the mesh once and every frame's point and cell data as the time
//! steps of a VTKHDF 2.x temporal `UnstructuredGrid` (read by VTK ≥ 9.3 and ParaView ≥ 5.12).
//!
//! # Layout
//!
//! ```text
//! /VTKHDF                    Version = [2, 0], Type = "UnstructuredGrid"
//!   NumberOfPoints, NumberOfCells, NumberOfConnectivityIds      one per part
//!   Types, Offsets, Connectivity                                the cells, once
//!   Points                   once, or one slab per step when the points move
//!   PointData/NAME, CellData/NAME                               one slab per step
//!   Steps                    NSteps = steps written
//!     Values                 the times (NSteps of them)
//!     PartOffsets, NumberOfParts, PointOffsets, CellOffsets, ConnectivityIdOffsets,
//!     PointDataOffsets/NAME, CellDataOffsets/NAME               where step k's data starts
//! ```
//!
//! Every dataset is contiguous and sized, when the file is laid out, for the number of frames
//! the run will write (its *capacity*); the file is created sparse at that size and step `k`
//! writes its slabs into slot `k` of each dataset. Step `k` is published by one write of less
//! than a page: the continuation chunks of the `Steps` group (holding `NSteps`) and of
//! `Steps/Values` (holding its dimension) sit side by side, so `NSteps` and the number of
//! times change together, after every slab of the step is written. A process killed at any
//! moment therefore leaves a file that VTK reads up to the last step published. (VTK reads
//! `Steps/Values` whole into an array of `NSteps` times, so the two must agree.)
//!
//! The layout is a function of the capacity, the parts' sizes, the fields and the precision
//! only. A resumed run publishes the steps the checkpoint kept and writes the following slots
//! as an uninterrupted run does; when it needs more slots than the file has (a run cut short
//! by `--max-steps`, continued), the file is laid out anew at the larger capacity and the
//! kept steps are copied, which gives the bytes an uninterrupted run writes. Points that
//! change between frames (rigid bodies, beams drawn at their current position) are detected at
//! the first frame that moves them, and the file is laid out anew with points per step.
//!
//! Fields are written in double precision, or in single precision
//! ([`Precision::Single`]); points always in double. Several parts per step (one per process
//! of a distributed run) are written by [`VtkHdfSeries::write_parts`].

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use crate::OutputError;
use crate::hdf5::{self, Dtype, Message, UNDEF};
use crate::vtu::{Field, Frame};

/// Precision of the point and cell fields in a VTKHDF file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Precision {
    /// 64-bit floats, the values as computed.
    #[default]
    Double,
    /// 32-bit floats (rounded to nearest): half the bytes, about 7 significant digits.
    Single,
}

impl Precision {
    fn dtype(self) -> Dtype {
        match self {
            Precision::Double => Dtype::F64,
            Precision::Single => Dtype::F32,
        }
    }

    fn code(self) -> i64 {
        match self {
            Precision::Double => 64,
            Precision::Single => 32,
        }
    }
}

/// Identifies a file of this writer: the first value of its `fem_layout` attribute.
const MAGIC: i64 = 0x4645_4d48_4446_0001; // "FEMHDF" 1
/// The attribute on `/VTKHDF` recording how the file is laid out (magic, capacity, whether
/// the points are per step, precision, a fingerprint of the shape): what a resumed run reads.
const LAYOUT_ATTRIBUTE: &str = "fem_layout";
/// Page size the commit block is aligned to.
const PAGE: u64 = 4096;

/// The sizes of one part of a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct PartShape {
    points: u64,
    cells: u64,
    ids: u64,
}

/// What a file's layout depends on besides its capacity.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Shape {
    parts: Vec<PartShape>,
    point_fields: Vec<(String, usize)>,
    cell_fields: Vec<(String, usize)>,
    ghost: bool,
}

impl Shape {
    fn of(parts: &[Frame<'_>]) -> Result<Self, String> {
        let first = &parts[0];
        let names = |fields: &[Field<'_>]| -> Vec<(String, usize)> {
            fields
                .iter()
                .map(|f| (f.name.to_string(), f.n_components))
                .collect()
        };
        let shape = Shape {
            parts: parts
                .iter()
                .map(|p| PartShape {
                    points: p.points.len() as u64,
                    cells: p.cells.n_cells() as u64,
                    ids: p.cells.connectivity().len() as u64,
                })
                .collect(),
            point_fields: names(&first.point_data),
            cell_fields: names(&first.cell_data),
            ghost: first.ghost_points.is_some(),
        };
        for (i, p) in parts.iter().enumerate() {
            if names(&p.point_data) != shape.point_fields
                || names(&p.cell_data) != shape.cell_fields
                || p.ghost_points.is_some() != shape.ghost
            {
                return Err(format!(
                    "part {i} has other fields than part 0: every part of a step has the same"
                ));
            }
        }
        for (kind, fields) in [("point", &shape.point_fields), ("cell", &shape.cell_fields)] {
            if let Some((name, _)) = fields.iter().find(|(n, _)| n.len() > 200) {
                return Err(format!(
                    "{kind} field name {name:?} is longer than 200 bytes"
                ));
            }
        }
        Ok(shape)
    }

    fn total(&self) -> PartShape {
        self.parts.iter().fold(
            PartShape {
                points: 0,
                cells: 0,
                ids: 0,
            },
            |a, p| PartShape {
                points: a.points + p.points,
                cells: a.cells + p.cells,
                ids: a.ids + p.ids,
            },
        )
    }

    fn fingerprint(&self) -> i64 {
        let mut bytes = Vec::new();
        for p in &self.parts {
            bytes.extend(p.points.to_le_bytes());
            bytes.extend(p.cells.to_le_bytes());
            bytes.extend(p.ids.to_le_bytes());
        }
        for (name, c) in self.point_fields.iter().chain(&self.cell_fields) {
            bytes.extend(name.as_bytes());
            bytes.push(0);
            bytes.extend((*c as u64).to_le_bytes());
        }
        bytes.push(u8::from(self.ghost));
        i64::from(crate::fingerprint(&[&bytes]))
    }
}

/// Everything the byte layout is a function of.
#[derive(Clone, Debug, PartialEq)]
struct Plan {
    capacity: u64,
    moving: bool,
    precision: Precision,
    shape: Shape,
}

/// A contiguous data region: where a dataset's values are.
#[derive(Clone, Copy, Debug, Default)]
struct Region {
    address: u64,
    size: u64,
}

/// One object header to lay out.
enum Object {
    Group {
        attributes: Vec<Message>,
        links: Vec<(String, usize)>,
        /// `Steps`: `NSteps` is in the commit block.
        commit: bool,
    },
    Dataset {
        dtype: Dtype,
        dims: Vec<u64>,
        region: usize,
        /// `Steps/Values`: its dataspace is in the commit block.
        commit: bool,
    },
}

/// Indices of the regions of a layout.
#[derive(Clone, Debug, Default)]
struct Regions {
    number_of_points: usize,
    number_of_cells: usize,
    number_of_ids: usize,
    types: usize,
    offsets: usize,
    connectivity: usize,
    points: usize,
    values: usize,
    part_offsets: usize,
    number_of_parts: usize,
    point_offsets: usize,
    cell_offsets: usize,
    id_offsets: usize,
    point_data_offsets: Vec<usize>,
    cell_data_offsets: Vec<usize>,
    point_data: Vec<usize>,
    cell_data: Vec<usize>,
    ghost: Option<usize>,
}

/// The byte layout of a file.
struct Layout {
    plan: Plan,
    /// Superblock and object headers, from byte 0.
    metadata: Vec<u8>,
    /// Address of the commit block (the two continuation chunks).
    commit_at: u64,
    regions: Vec<Region>,
    index: Regions,
    end: u64,
}

impl Layout {
    fn new(plan: Plan) -> Self {
        let f = plan.capacity;
        let shape = &plan.shape;
        let total = shape.total();
        let n_parts = shape.parts.len() as u64;
        let value = plan.precision.dtype();
        let mut sizes: Vec<u64> = Vec::new();
        let mut region = |bytes: u64| {
            sizes.push(bytes);
            sizes.len() - 1
        };
        let mut ix = Regions {
            number_of_points: region(8 * n_parts),
            number_of_cells: region(8 * n_parts),
            number_of_ids: region(8 * n_parts),
            types: region(total.cells),
            offsets: region(8 * (total.cells + n_parts)),
            connectivity: region(8 * total.ids),
            points: region(24 * total.points * if plan.moving { f } else { 1 }),
            values: region(8 * f),
            part_offsets: region(8 * f),
            number_of_parts: region(8 * f),
            point_offsets: region(8 * f),
            cell_offsets: region(8 * f),
            id_offsets: region(8 * f),
            ..Regions::default()
        };
        for _ in &shape.point_fields {
            ix.point_data_offsets.push(region(8 * f));
        }
        if shape.ghost {
            ix.point_data_offsets.push(region(8 * f));
        }
        for _ in &shape.cell_fields {
            ix.cell_data_offsets.push(region(8 * f));
        }
        for (_, c) in &shape.point_fields {
            ix.point_data
                .push(region(value.size() as u64 * *c as u64 * total.points * f));
        }
        ix.ghost = shape.ghost.then(|| region(total.points));
        for (_, c) in &shape.cell_fields {
            ix.cell_data
                .push(region(value.size() as u64 * *c as u64 * total.cells * f));
        }

        // The object headers, children after their group.
        let i64s = |n: u64| (Dtype::I64, vec![n]);
        let mut objects: Vec<Object> = Vec::new();
        let dataset = |objects: &mut Vec<Object>, (dtype, dims): (Dtype, Vec<u64>), region| {
            objects.push(Object::Dataset {
                dtype,
                dims,
                region,
                commit: false,
            });
            objects.len() - 1
        };
        // 0: /VTKHDF (first, at a fixed address: its first attribute is `fem_layout`).
        objects.push(Object::Group {
            attributes: Vec::new(),
            links: Vec::new(),
            commit: false,
        });
        // 1: the root group.
        objects.push(Object::Group {
            attributes: Vec::new(),
            links: vec![("VTKHDF".into(), 0)],
            commit: false,
        });
        let mut links = Vec::new();
        for (name, spec, r) in [
            ("NumberOfPoints", i64s(n_parts), ix.number_of_points),
            ("NumberOfCells", i64s(n_parts), ix.number_of_cells),
            ("NumberOfConnectivityIds", i64s(n_parts), ix.number_of_ids),
            ("Types", (Dtype::U8, vec![total.cells]), ix.types),
            ("Offsets", i64s(total.cells + n_parts), ix.offsets),
            ("Connectivity", i64s(total.ids), ix.connectivity),
            (
                "Points",
                (
                    Dtype::F64,
                    vec![total.points * if plan.moving { f } else { 1 }, 3],
                ),
                ix.points,
            ),
        ] {
            links.push((name.to_string(), dataset(&mut objects, spec, r)));
        }
        let field_dims = |n: u64, c: usize| {
            if c == 1 {
                vec![n * f]
            } else {
                vec![n * f, c as u64]
            }
        };
        // PointData, CellData.
        for (group, fields, regions, n) in [
            (
                "PointData",
                &shape.point_fields,
                &ix.point_data,
                total.points,
            ),
            ("CellData", &shape.cell_fields, &ix.cell_data, total.cells),
        ] {
            let at = objects.len();
            objects.push(Object::Group {
                attributes: Vec::new(),
                links: Vec::new(),
                commit: false,
            });
            let mut children = Vec::new();
            for ((name, c), &r) in fields.iter().zip(regions) {
                children.push((
                    name.clone(),
                    dataset(&mut objects, (value, field_dims(n, *c)), r),
                ));
            }
            if group == "PointData"
                && let Some(r) = ix.ghost
            {
                children.push((
                    "vtkGhostType".into(),
                    dataset(&mut objects, (Dtype::U8, vec![total.points]), r),
                ));
            }
            set_links(&mut objects[at], children);
            links.push((group.to_string(), at));
        }
        // Steps.
        let steps = objects.len();
        objects.push(Object::Group {
            attributes: Vec::new(),
            links: Vec::new(),
            commit: true,
        });
        objects.push(Object::Dataset {
            dtype: Dtype::F64,
            dims: vec![f],
            region: ix.values,
            commit: true,
        });
        let mut step_links = vec![("Values".to_string(), steps + 1)];
        for (name, spec, r) in [
            ("PartOffsets", i64s(f), ix.part_offsets),
            ("NumberOfParts", i64s(f), ix.number_of_parts),
            ("PointOffsets", i64s(f), ix.point_offsets),
            ("CellOffsets", (Dtype::I64, vec![f, 1]), ix.cell_offsets),
            (
                "ConnectivityIdOffsets",
                (Dtype::I64, vec![f, 1]),
                ix.id_offsets,
            ),
        ] {
            step_links.push((name.to_string(), dataset(&mut objects, spec, r)));
        }
        let mut point_names: Vec<String> =
            shape.point_fields.iter().map(|(n, _)| n.clone()).collect();
        if shape.ghost {
            point_names.push("vtkGhostType".into());
        }
        let cell_names: Vec<String> = shape.cell_fields.iter().map(|(n, _)| n.clone()).collect();
        for (group, names, regions) in [
            ("PointDataOffsets", &point_names, &ix.point_data_offsets),
            ("CellDataOffsets", &cell_names, &ix.cell_data_offsets),
        ] {
            let at = objects.len();
            objects.push(Object::Group {
                attributes: Vec::new(),
                links: Vec::new(),
                commit: false,
            });
            let children = names
                .iter()
                .zip(regions)
                .map(|(name, &r)| (name.clone(), dataset(&mut objects, i64s(f), r)))
                .collect();
            set_links(&mut objects[at], children);
            step_links.push((group.to_string(), at));
        }
        set_links(&mut objects[steps], step_links);
        links.push(("Steps".to_string(), steps));
        let mut layout_values = Vec::new();
        for v in [
            MAGIC,
            f as i64,
            i64::from(plan.moving),
            plan.precision.code(),
            shape.fingerprint(),
        ] {
            layout_values.extend(v.to_le_bytes());
        }
        let version: Vec<u8> = [2i64, 0].iter().flat_map(|v| v.to_le_bytes()).collect();
        objects[0] = Object::Group {
            attributes: vec![
                Message::attribute(LAYOUT_ATTRIBUTE, Dtype::I64, &[5], &layout_values),
                Message::attribute("Version", Dtype::I64, &[2], &version),
                Message::attribute("Type", Dtype::Str(16), &[], b"UnstructuredGrid"),
            ],
            links,
            commit: false,
        };

        // Addresses: headers from byte 48, the commit block on the next page, then the
        // regions, each 8-byte aligned.
        let commit_len = commit_block(0, f, 0).len() as u64;
        let dummy = vec![Region::default(); sizes.len()];
        let zeros = vec![0u64; objects.len()];
        let first = headers(&objects, &zeros, &dummy, 0, f);
        let mut addresses = Vec::with_capacity(objects.len());
        let mut at = hdf5::SUPERBLOCK_LEN as u64;
        for len in first.iter().map(|h| h.len() as u64) {
            addresses.push(at);
            at += len;
        }
        let commit_at = at.div_ceil(PAGE) * PAGE;
        let mut at = commit_at + commit_len;
        let mut regions = Vec::with_capacity(sizes.len());
        for &size in &sizes {
            at = at.div_ceil(8) * 8;
            regions.push(Region { address: at, size });
            at += size;
        }
        let end = at;
        let built = headers(&objects, &addresses, &regions, commit_at, f);
        let mut metadata = hdf5::superblock(end, addresses[1]);
        for h in built {
            metadata.extend(h);
        }
        Layout {
            plan,
            metadata,
            commit_at,
            regions,
            index: ix,
            end,
        }
    }

    fn region(&self, i: usize) -> Region {
        self.regions[i]
    }

    /// The byte offset of slot `k` of a per-step region whose slabs have `slab` bytes.
    fn slot(&self, i: usize, slab: u64, k: u64) -> u64 {
        self.regions[i].address + k * slab
    }
}

fn set_links(object: &mut Object, children: Vec<(String, usize)>) {
    if let Object::Group { links, .. } = object {
        *links = children;
    }
}

/// The commit block: the continuation chunks of `Steps` (the attribute `NSteps = n`) and of
/// `Steps/Values` (its dataspace, `n` of at most `capacity` times).
fn commit_block(n: u64, capacity: u64, values_at: u64) -> Vec<u8> {
    let mut out = steps_chunk(n);
    out.extend(values_chunk(n, capacity, values_at));
    out
}

fn steps_chunk(n: u64) -> Vec<u8> {
    hdf5::continuation_chunk(&[Message::attribute(
        "NSteps",
        Dtype::I64,
        &[],
        &(n as i64).to_le_bytes(),
    )])
}

/// The dataspace and the layout of `Steps/Values`: `n` times (of `capacity`), the first `8 n`
/// bytes of its region at `values_at` (the layout's size is the dataspace's, as HDF5 readers
/// require of contiguous data).
fn values_chunk(n: u64, capacity: u64, values_at: u64) -> Vec<u8> {
    hdf5::continuation_chunk(&[
        Message::dataspace(&[n], Some(&[capacity])),
        Message::contiguous(values_at, 8 * n),
    ])
}

/// The object headers of `objects` at `addresses`, with their regions and the commit block
/// at `commit_at`.
fn headers(
    objects: &[Object],
    addresses: &[u64],
    regions: &[Region],
    commit_at: u64,
    capacity: u64,
) -> Vec<Vec<u8>> {
    let steps_len = steps_chunk(0).len() as u64;
    let values_len = values_chunk(0, capacity, 0).len() as u64;
    objects
        .iter()
        .map(|o| match o {
            Object::Group {
                attributes,
                links,
                commit,
            } => {
                let mut m = attributes.clone();
                m.push(Message::link_info());
                m.push(Message::group_info());
                for (name, child) in links {
                    m.push(Message::link(name, addresses[*child]));
                }
                if *commit {
                    m.push(Message::continuation(commit_at, steps_len));
                }
                hdf5::object_header(&m)
            }
            Object::Dataset {
                dtype,
                dims,
                region,
                commit,
            } => {
                let r = regions[*region];
                let mut m = Vec::new();
                if !commit {
                    m.push(Message::dataspace(dims, None));
                }
                m.push(Message::datatype(*dtype));
                m.push(Message::fill_value());
                let address = if r.size == 0 { UNDEF } else { r.address };
                if !commit {
                    m.push(Message::contiguous(address, r.size));
                } else {
                    m.push(Message::continuation(commit_at + steps_len, values_len));
                }
                hdf5::object_header(&m)
            }
        })
        .collect()
}

/// The position of the `fem_layout` values in a file: inside the first header, after the
/// superblock.
fn layout_attribute_offset() -> u64 {
    let m = Message::attribute(LAYOUT_ATTRIBUTE, Dtype::I64, &[5], &[0u8; 40]);
    (hdf5::SUPERBLOCK_LEN + hdf5::OBJECT_HEADER_PREFIX + 4 + m.body().len() - 40) as u64
}

/// What a resumed series found in its file.
#[derive(Clone, Debug)]
struct Found {
    capacity: u64,
    moving: bool,
    precision: i64,
    fingerprint: i64,
    times: Vec<f64>,
}

/// Writes `DIR/X.vtkhdf`: every frame a time step of one VTKHDF file (see the
/// [module docs](self)). The same shape as [`FrameSeries`](crate::FrameSeries): create or
/// resume, write a frame, the frames so far, the path.
#[derive(Debug)]
pub struct VtkHdfSeries {
    dir: PathBuf,
    path: PathBuf,
    precision: Precision,
    capacity: u64,
    file: Option<File>,
    layout: Option<LayoutState>,
    times: Vec<f64>,
    /// Set by `resume` until the first frame says what the layout is.
    found: Option<Found>,
    fsync: bool,
    scratch: Vec<u8>,
}

/// The layout in use and what is checked against it at every frame.
#[derive(Debug)]
struct LayoutState {
    plan: Plan,
    /// The points as stored once (compared with every frame's while they do not move).
    static_points: Vec<[f64; 3]>,
    /// Fingerprint of the cells of all parts (they are stored once).
    cells: u32,
}

impl std::fmt::Debug for Layout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Layout").field("end", &self.end).finish()
    }
}

impl VtkHdfSeries {
    /// Creates `dir` (and its parents) if needed and an empty `dir/base.vtkhdf`, laid out at
    /// the first frame for `capacity` frames (more are taken by laying the file out anew).
    ///
    /// # Errors
    /// [`OutputError::InvalidData`] if `base` is empty or contains a path separator;
    /// [`OutputError::Io`] naming the directory or file on a file-system error.
    pub fn create(
        dir: impl AsRef<Path>,
        base: &str,
        precision: Precision,
        capacity: usize,
    ) -> Result<Self, OutputError> {
        let mut series = Self::open(dir, base, precision, capacity)?;
        let file = create_rw(&series.path)?;
        series.file = Some(file);
        Ok(series)
    }

    /// Continues a series whose first frames (at `times`) are in `dir/base.vtkhdf`: the file
    /// is checked (written by this writer, with these times) and its later steps are dropped
    /// at the next frame.
    ///
    /// # Errors
    /// As [`create`](Self::create); [`OutputError::InvalidData`] if the file is not one this
    /// writer wrote or its times are not `times`.
    pub fn resume(
        dir: impl AsRef<Path>,
        base: &str,
        precision: Precision,
        capacity: usize,
        times: &[f64],
    ) -> Result<Self, OutputError> {
        if times.is_empty() {
            return Self::create(dir, base, precision, capacity);
        }
        let mut series = Self::open(dir, base, precision, capacity)?;
        let path = series.path.clone();
        let mut file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .map_err(|e| OutputError::io("open", &path, e))?;
        let found = read_found(&mut file, &path)?;
        if found.times.len() < times.len()
            || found.times[..times.len()]
                .iter()
                .zip(times)
                .any(|(a, b)| a.to_bits() != b.to_bits())
        {
            return Err(OutputError::invalid(
                &path,
                format!(
                    "its steps are not the {} frames the checkpoint lists: the run cannot resume",
                    times.len()
                ),
            ));
        }
        series.file = Some(file);
        series.times = times.to_vec();
        series.found = Some(found);
        Ok(series)
    }

    fn open(
        dir: impl AsRef<Path>,
        base: &str,
        precision: Precision,
        capacity: usize,
    ) -> Result<Self, OutputError> {
        let dir = dir.as_ref().to_path_buf();
        if base.is_empty() || base.contains(['/', '\\']) || base == "." || base == ".." {
            return Err(OutputError::invalid(
                &dir.join(format!("{base}.vtkhdf")),
                format!("invalid base name {base:?} (must be a plain, non-empty file name)"),
            ));
        }
        std::fs::create_dir_all(&dir).map_err(|e| OutputError::io("create directory", &dir, e))?;
        let path = dir.join(format!("{base}.vtkhdf"));
        Ok(Self {
            dir,
            path,
            precision,
            capacity: capacity.max(1) as u64,
            file: None,
            layout: None,
            times: Vec::new(),
            found: None,
            fsync: false,
            scratch: Vec::new(),
        })
    }

    /// The times of the frames written so far.
    pub fn times(&self) -> Vec<f64> {
        self.times.clone()
    }

    /// Number of frames written so far (also the index of the next frame).
    pub fn n_frames(&self) -> usize {
        self.times.len()
    }

    /// Path of the `.vtkhdf` file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Output directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The precision of the fields.
    pub fn precision(&self) -> Precision {
        self.precision
    }

    /// Whether to `fsync` the data of a step before publishing it and the publication itself
    /// (default `false`: the order of the writes already protects against a killed process;
    /// fsync also protects against power loss).
    pub fn set_fsync(&mut self, fsync: bool) {
        self.fsync = fsync;
    }

    /// Writes the next frame (one part). Returns the path of the file.
    ///
    /// # Errors
    /// As [`write_parts`](Self::write_parts).
    pub fn write_frame(&mut self, time: f64, frame: &Frame<'_>) -> Result<PathBuf, OutputError> {
        self.write_parts(time, std::slice::from_ref(frame))
    }

    /// Writes the next step from `parts` (one per process of a distributed run, each with
    /// its own points and cells numbered from 0), then publishes it.
    ///
    /// # Errors
    /// [`OutputError::InvalidData`] for an inconsistent frame, a non-finite time or value, a
    /// field beyond single precision, cells or sizes that differ from the first frame's;
    /// [`OutputError::Io`] on a file error. On error the step is not published, so the file
    /// still reads up to the previous step.
    pub fn write_parts(&mut self, time: f64, parts: &[Frame<'_>]) -> Result<PathBuf, OutputError> {
        let path = self.path.clone();
        if parts.is_empty() {
            return Err(OutputError::invalid(
                &path,
                "a step needs at least one part",
            ));
        }
        if !time.is_finite() {
            return Err(OutputError::invalid(
                &path,
                format!("time {time} is not finite"),
            ));
        }
        for p in parts {
            p.validate().map_err(|m| OutputError::invalid(&path, m))?;
            if let Some(name) = p.first_non_finite_field() {
                return Err(OutputError::invalid(
                    &path,
                    format!("{name} holds a value that is not finite"),
                ));
            }
        }
        let shape = Shape::of(parts).map_err(|m| OutputError::invalid(&path, m))?;
        let k = self.times.len() as u64;
        let cells = cells_fingerprint(parts);
        match &self.layout {
            None => self.lay_out(parts, &shape, cells)?,
            Some(state) => {
                if state.plan.shape != shape || state.cells != cells {
                    return Err(OutputError::invalid(
                        &path,
                        "the cells or the fields differ from the first frame's: a VTKHDF series stores the cells once",
                    ));
                }
            }
        }
        let moved = {
            let state = self.layout.as_ref().expect("laid out above");
            !state.plan.moving && !same_points(&state.static_points, parts)
        };
        if moved || k >= self.plan().capacity {
            let mut plan = self.plan().clone();
            plan.moving |= moved;
            if k >= plan.capacity {
                // More frames than announced: twice the slots, so that a caller who
                // under-announces pays O(log) relayouts, not one per frame.
                plan.capacity = (2 * plan.capacity).max(self.capacity).max(k + 1);
            }
            self.relay(plan)?;
        }
        self.write_step(k, time, parts)?;
        self.times.push(time);
        Ok(path)
    }

    fn plan(&self) -> &Plan {
        &self.layout.as_ref().expect("laid out").plan
    }

    fn file(&mut self) -> &mut File {
        self.file.as_mut().expect("the file is open")
    }

    /// Lays the file out at its first frame (or the first frame after a resume).
    fn lay_out(
        &mut self,
        parts: &[Frame<'_>],
        shape: &Shape,
        cells: u32,
    ) -> Result<(), OutputError> {
        let path = self.path.clone();
        let mut static_points: Vec<[f64; 3]> = Vec::new();
        for p in parts {
            static_points.extend_from_slice(p.points);
        }
        let Some(found) = self.found.take() else {
            let plan = Plan {
                capacity: self.capacity,
                moving: false,
                precision: self.precision,
                shape: shape.clone(),
            };
            let layout = Layout::new(plan.clone());
            let mut file = self.file.take().expect("the file is open");
            write_new(&mut file, &path, &layout, parts, &static_points, None)?;
            self.file = Some(file);
            self.layout = Some(LayoutState {
                plan,
                static_points,
                cells,
            });
            return Ok(());
        };
        // A resumed series: the file's layout must be this run's.
        if found.precision != self.precision.code() {
            return Err(OutputError::invalid(
                &path,
                format!(
                    "it holds fields in {}-bit precision and this run writes {}-bit: the run cannot resume",
                    found.precision,
                    self.precision.code()
                ),
            ));
        }
        if found.fingerprint != shape.fingerprint() {
            return Err(OutputError::invalid(
                &path,
                "its sizes or fields are not this run's: the run cannot resume",
            ));
        }
        let plan = Plan {
            capacity: found.capacity,
            moving: found.moving,
            precision: self.precision,
            shape: shape.clone(),
        };
        // The stored points (they were static, or the first step's).
        let layout = Layout::new(plan.clone());
        let r = layout.region(layout.index.points);
        let mut stored = vec![0u8; (24 * shape.total().points) as usize];
        read_at(self.file(), &path, r.address, &mut stored)?;
        let static_points = stored
            .chunks_exact(24)
            .map(|c| {
                let v = |i: usize| f64::from_le_bytes(c[8 * i..8 * i + 8].try_into().unwrap());
                [v(0), v(1), v(2)]
            })
            .collect();
        self.layout = Some(LayoutState {
            plan: plan.clone(),
            static_points,
            cells,
        });
        if plan.capacity < self.capacity {
            let mut grown = plan;
            grown.capacity = self.capacity;
            self.relay(grown)?;
        } else {
            // Drop the steps past the checkpoint.
            let n = self.times.len() as u64;
            let block = commit_block(n, plan.capacity, layout.region(layout.index.values).address);
            let at = layout.commit_at;
            write_at(self.file(), &path, at, &block)?;
        }
        Ok(())
    }

    /// Lays the file out anew for `plan` (more slots, or points per step), copying the steps
    /// written so far; the new file replaces the old one by a rename.
    fn relay(&mut self, plan: Plan) -> Result<(), OutputError> {
        let path = self.path.clone();
        let old_plan = self.plan().clone();
        let old = Layout::new(old_plan.clone());
        let new = Layout::new(plan.clone());
        let n = self.times.len() as u64;
        let tmp = crate::atomic::tmp_path(&path);
        let result = (|| {
            let mut out = create_rw(&tmp)?;
            let file = self.file.as_mut().expect("the file is open");
            copy_layout(file, &path, &old, &mut out, &tmp, &new, n)?;
            if self.fsync {
                out.sync_all()
                    .map_err(|e| OutputError::io("fsync", &tmp, e))?;
            }
            std::fs::rename(&tmp, &path)
                .map_err(|e| OutputError::io("rename temporary file to", &path, e))?;
            Ok(out)
        })();
        match result {
            Ok(out) => {
                self.file = Some(out);
                self.layout.as_mut().expect("laid out").plan = plan;
                Ok(())
            }
            Err(e) => {
                let _ = std::fs::remove_file(&tmp);
                Err(e)
            }
        }
    }

    /// Writes the slabs of step `k`, its time, then publishes it.
    fn write_step(&mut self, k: u64, time: f64, parts: &[Frame<'_>]) -> Result<(), OutputError> {
        let path = self.path.clone();
        let plan = self.plan().clone();
        let layout = Layout::new(plan.clone());
        let total = plan.shape.total();
        let value = plan.precision.dtype();
        let mut scratch = std::mem::take(&mut self.scratch);
        let file = self.file.as_mut().expect("the file is open");
        if plan.moving {
            scratch.clear();
            for p in parts {
                for point in p.points {
                    for v in point {
                        scratch.extend(v.to_le_bytes());
                    }
                }
            }
            let at = layout.slot(layout.index.points, 24 * total.points, k);
            write_at(file, &path, at, &scratch)?;
        }
        for (i, (name, c)) in plan.shape.point_fields.iter().enumerate() {
            encode_field(&mut scratch, parts, name, true, value, &path)?;
            let slab = (value.size() * c) as u64 * total.points;
            write_at(
                file,
                &path,
                layout.slot(layout.index.point_data[i], slab, k),
                &scratch,
            )?;
        }
        for (i, (name, c)) in plan.shape.cell_fields.iter().enumerate() {
            encode_field(&mut scratch, parts, name, false, value, &path)?;
            let slab = (value.size() * c) as u64 * total.cells;
            write_at(
                file,
                &path,
                layout.slot(layout.index.cell_data[i], slab, k),
                &scratch,
            )?;
        }
        write_at(
            file,
            &path,
            layout.slot(layout.index.values, 8, k),
            &time.to_le_bytes(),
        )?;
        self.scratch = scratch;
        if self.fsync {
            file.sync_data()
                .map_err(|e| OutputError::io("fsync", &path, e))?;
        }
        // The publication: one write inside one page.
        write_at(
            file,
            &path,
            layout.commit_at,
            &commit_block(
                k + 1,
                plan.capacity,
                layout.region(layout.index.values).address,
            ),
        )?;
        if self.fsync {
            file.sync_data()
                .map_err(|e| OutputError::io("fsync", &path, e))?;
        }
        Ok(())
    }
}

/// Writes a new file laid out by `layout` with the static data of `parts` (and `points`, the
/// points stored once) and no step published, metadata last.
fn write_new(
    file: &mut File,
    path: &Path,
    layout: &Layout,
    parts: &[Frame<'_>],
    points: &[[f64; 3]],
    copy_steps: Option<u64>,
) -> Result<(), OutputError> {
    let plan = &layout.plan;
    let ix = &layout.index;
    let f = plan.capacity;
    file.set_len(layout.end)
        .map_err(|e| OutputError::io("allocate", path, e))?;
    let total = plan.shape.total();
    let i64s = |values: &mut dyn Iterator<Item = u64>| -> Vec<u8> {
        values.flat_map(|v| (v as i64).to_le_bytes()).collect()
    };
    let shape = &plan.shape;
    let mut write = |i: usize, bytes: &[u8]| write_at(file, path, layout.region(i).address, bytes);
    write(
        ix.number_of_points,
        &i64s(&mut shape.parts.iter().map(|p| p.points)),
    )?;
    write(
        ix.number_of_cells,
        &i64s(&mut shape.parts.iter().map(|p| p.cells)),
    )?;
    write(
        ix.number_of_ids,
        &i64s(&mut shape.parts.iter().map(|p| p.ids)),
    )?;
    if !parts.is_empty() {
        let mut types = Vec::with_capacity(total.cells as usize);
        let mut offsets = Vec::with_capacity(8 * (total.cells as usize + parts.len()));
        let mut connectivity = Vec::with_capacity(8 * total.ids as usize);
        for p in parts {
            types.extend(p.cells.type_codes());
            offsets.extend(0i64.to_le_bytes());
            for &o in p.cells.offsets() {
                offsets.extend((o as i64).to_le_bytes());
            }
            for &i in p.cells.connectivity() {
                connectivity.extend((i as i64).to_le_bytes());
            }
        }
        write(ix.types, &types)?;
        write(ix.offsets, &offsets)?;
        write(ix.connectivity, &connectivity)?;
        if let Some(g) = ix.ghost {
            let ghost: Vec<u8> = parts
                .iter()
                .flat_map(|p| p.ghost_points.unwrap_or(&[]).iter().copied())
                .collect();
            write(g, &ghost)?;
        }
    }
    if copy_steps.is_none() {
        let bytes: Vec<u8> = points
            .iter()
            .flat_map(|p| p.iter().flat_map(|v| v.to_le_bytes()))
            .collect();
        write(ix.points, &bytes)?;
    }
    let n_parts = shape.parts.len() as u64;
    write(ix.part_offsets, &i64s(&mut (0..f).map(|_| 0)))?;
    write(ix.number_of_parts, &i64s(&mut (0..f).map(|_| n_parts)))?;
    let moving = plan.moving;
    write(
        ix.point_offsets,
        &i64s(&mut (0..f).map(|k| if moving { k * total.points } else { 0 })),
    )?;
    write(ix.cell_offsets, &i64s(&mut (0..f).map(|_| 0)))?;
    write(ix.id_offsets, &i64s(&mut (0..f).map(|_| 0)))?;
    for (i, &r) in ix.point_data_offsets.iter().enumerate() {
        let is_ghost = i >= shape.point_fields.len();
        write(
            r,
            &i64s(&mut (0..f).map(|k| if is_ghost { 0 } else { k * total.points })),
        )?;
    }
    for &r in &ix.cell_data_offsets {
        write(r, &i64s(&mut (0..f).map(|k| k * total.cells)))?;
    }
    let n = copy_steps.unwrap_or(0);
    write_at(
        file,
        path,
        layout.commit_at,
        &commit_block(n, plan.capacity, layout.region(layout.index.values).address),
    )?;
    write_at(file, path, 0, &layout.metadata)?;
    Ok(())
}

/// Writes `new` into `out` with the static data and the first `n` steps of `old` (in `file`).
fn copy_layout(
    file: &mut File,
    path: &Path,
    old: &Layout,
    out: &mut File,
    out_path: &Path,
    new: &Layout,
    n: u64,
) -> Result<(), OutputError> {
    write_new(out, out_path, new, &[], &[], Some(n))?;
    let (o, w) = (&old.index, &new.index);
    let total = new.plan.shape.total();
    let mut buffer = Vec::new();
    let mut copy = |from: u64, to: u64, len: u64, buffer: &mut Vec<u8>| {
        let mut done = 0;
        while done < len {
            let piece = (len - done).min(64 << 20);
            buffer.resize(piece as usize, 0);
            read_at(file, path, from + done, buffer)?;
            write_at(out, out_path, to + done, buffer)?;
            done += piece;
        }
        Ok::<(), OutputError>(())
    };
    // Cells and ghost flags: the same bytes in both.
    for (a, b) in [
        (o.types, w.types),
        (o.offsets, w.offsets),
        (o.connectivity, w.connectivity),
    ]
    .into_iter()
    .chain(o.ghost.zip(w.ghost))
    {
        let r = old.region(a);
        copy(r.address, new.region(b).address, r.size, &mut buffer)?;
    }
    // Points: once, or per step (the static points repeated for the steps before they moved).
    let slab = 24 * total.points;
    let from_points = old.region(o.points).address;
    if !new.plan.moving {
        copy(from_points, new.region(w.points).address, slab, &mut buffer)?;
    } else {
        for k in 0..n.max(1) {
            let from = if old.plan.moving {
                old.slot(o.points, slab, k)
            } else {
                from_points
            };
            copy(from, new.slot(w.points, slab, k), slab, &mut buffer)?;
        }
    }
    copy(
        old.region(o.values).address,
        new.region(w.values).address,
        8 * n,
        &mut buffer,
    )?;
    let value = new.plan.precision.dtype().size() as u64;
    for (i, (_, c)) in new.plan.shape.point_fields.iter().enumerate() {
        let len = value * *c as u64 * total.points * n;
        copy(
            old.region(o.point_data[i]).address,
            new.region(w.point_data[i]).address,
            len,
            &mut buffer,
        )?;
    }
    for (i, (_, c)) in new.plan.shape.cell_fields.iter().enumerate() {
        let len = value * *c as u64 * total.cells * n;
        copy(
            old.region(o.cell_data[i]).address,
            new.region(w.cell_data[i]).address,
            len,
            &mut buffer,
        )?;
    }
    Ok(())
}

/// The values of field `name` of every part, concatenated, encoded little endian in `dtype`.
fn encode_field(
    out: &mut Vec<u8>,
    parts: &[Frame<'_>],
    name: &str,
    point: bool,
    dtype: Dtype,
    path: &Path,
) -> Result<(), OutputError> {
    out.clear();
    for p in parts {
        let fields = if point { &p.point_data } else { &p.cell_data };
        let f = fields
            .iter()
            .find(|f| f.name == name)
            .expect("the shape lists the part's fields");
        match dtype {
            Dtype::F32 => {
                out.reserve(4 * f.values.len());
                for &v in f.values {
                    let s = v as f32;
                    if !s.is_finite() {
                        return Err(OutputError::invalid(
                            path,
                            format!("field {name:?} holds {v:e}, beyond single precision"),
                        ));
                    }
                    out.extend(s.to_le_bytes());
                }
            }
            _ => {
                out.reserve(8 * f.values.len());
                for &v in f.values {
                    out.extend(v.to_le_bytes());
                }
            }
        }
    }
    Ok(())
}

fn same_points(stored: &[[f64; 3]], parts: &[Frame<'_>]) -> bool {
    let mut i = 0;
    for p in parts {
        for point in p.points {
            let Some(s) = stored.get(i) else { return false };
            if s.iter().zip(point).any(|(a, b)| a.to_bits() != b.to_bits()) {
                return false;
            }
            i += 1;
        }
    }
    i == stored.len()
}

fn cells_fingerprint(parts: &[Frame<'_>]) -> u32 {
    let mut h = crc32fast::Hasher::new();
    for p in parts {
        h.update(&p.cells.type_codes());
        for &o in p.cells.offsets() {
            h.update(&o.to_le_bytes());
        }
        for &c in p.cells.connectivity() {
            h.update(&c.to_le_bytes());
        }
        h.update(b"|");
    }
    h.finalize()
}

/// Creates (truncating) `path` for reading and writing.
fn create_rw(path: &Path) -> Result<File, OutputError> {
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(path)
        .map_err(|e| OutputError::io("create", path, e))
}

fn write_at(file: &mut File, path: &Path, at: u64, bytes: &[u8]) -> Result<(), OutputError> {
    file.seek(SeekFrom::Start(at))
        .and_then(|_| file.write_all(bytes))
        .map_err(|e| OutputError::io("write", path, e))
}

fn read_at(file: &mut File, path: &Path, at: u64, bytes: &mut [u8]) -> Result<(), OutputError> {
    file.seek(SeekFrom::Start(at))
        .and_then(|_| file.read_exact(bytes))
        .map_err(|e| OutputError::io("read", path, e))
}

/// Reads what a resumed series needs from a file this writer wrote.
fn read_found(file: &mut File, path: &Path) -> Result<Found, OutputError> {
    let not_ours = || {
        OutputError::invalid(
            path,
            "it is not a VTKHDF file written by fem (or it is damaged): the run cannot resume",
        )
    };
    let mut superblock = [0u8; hdf5::SUPERBLOCK_LEN];
    read_at(file, path, 0, &mut superblock).map_err(|_| not_ours())?;
    if &superblock[..8] != b"\x89HDF\r\n\x1a\n"
        || hdf5::lookup3(&superblock[..44]).to_le_bytes() != superblock[44..48]
    {
        return Err(not_ours());
    }
    let mut values = [0u8; 40];
    read_at(file, path, layout_attribute_offset(), &mut values).map_err(|_| not_ours())?;
    let v = |i: usize| i64::from_le_bytes(values[8 * i..8 * i + 8].try_into().unwrap());
    if v(0) != MAGIC || v(1) <= 0 || v(1) > 1 << 40 {
        return Err(not_ours());
    }
    // The published times: NSteps from the commit block, the values from their region,
    // found through the Values header's layout message. The layout is recomputed at the first
    // frame; here the times are read by the addresses the headers hold.
    let found = Found {
        capacity: v(1) as u64,
        moving: v(2) != 0,
        precision: v(3),
        fingerprint: v(4),
        times: read_times(file, path).map_err(|_| not_ours())?,
    };
    Ok(found)
}

/// The times of the published steps, read with the file's own structure: the root group's
/// link `VTKHDF`, its link `Steps`, the continuation (commit block) and the link `Values`.
fn read_times(file: &mut File, path: &Path) -> Result<Vec<f64>, OutputError> {
    let header = |file: &mut File, at: u64| -> Result<Vec<(u8, Vec<u8>)>, OutputError> {
        let mut prefix = [0u8; hdf5::OBJECT_HEADER_PREFIX];
        read_at(file, path, at, &mut prefix)?;
        if &prefix[..4] != b"OHDR" {
            return Err(OutputError::invalid(path, "no object header"));
        }
        let size = u32::from_le_bytes(prefix[6..10].try_into().unwrap()) as usize;
        if size > 1 << 20 {
            return Err(OutputError::invalid(path, "object header too large"));
        }
        let mut body = vec![0u8; size];
        read_at(
            file,
            path,
            at + hdf5::OBJECT_HEADER_PREFIX as u64,
            &mut body,
        )?;
        Ok(messages(&body))
    };
    let link = |messages: &[(u8, Vec<u8>)], name: &str| -> Option<u64> {
        messages.iter().find_map(|(kind, b)| {
            (*kind == 0x06
                && b.len() >= 3 + name.len() + 8
                && &b[3..3 + name.len()] == name.as_bytes()
                && b[2] as usize == name.len())
            .then(|| u64::from_le_bytes(b[3 + name.len()..11 + name.len()].try_into().unwrap()))
        })
    };
    let bad = || OutputError::invalid(path, "unexpected structure");
    let mut superblock = [0u8; hdf5::SUPERBLOCK_LEN];
    read_at(file, path, 0, &mut superblock)?;
    let root = u64::from_le_bytes(superblock[36..44].try_into().unwrap());
    let vtkhdf = link(&header(file, root)?, "VTKHDF").ok_or_else(bad)?;
    let steps = link(&header(file, vtkhdf)?, "Steps").ok_or_else(bad)?;
    let values = link(&header(file, steps)?, "Values").ok_or_else(bad)?;
    let values = header(file, values)?;

    let (chunk, len) = values
        .iter()
        .find_map(|(kind, b)| {
            (*kind == 0x10 && b.len() == 16).then(|| {
                (
                    u64::from_le_bytes(b[0..8].try_into().unwrap()),
                    u64::from_le_bytes(b[8..16].try_into().unwrap()),
                )
            })
        })
        .ok_or_else(bad)?;
    if len > 4096 {
        return Err(bad());
    }
    let mut block = vec![0u8; len as usize];
    read_at(file, path, chunk, &mut block)?;
    if &block[..4] != b"OCHK" {
        return Err(bad());
    }
    let space = messages(&block[4..block.len() - 4]);
    let (data, _) = space
        .iter()
        .find_map(|(kind, b)| {
            (*kind == 0x08 && b.len() == 18).then(|| {
                let address = u64::from_le_bytes(b[2..10].try_into().unwrap());
                let size = u64::from_le_bytes(b[10..18].try_into().unwrap());
                (address, size)
            })
        })
        .ok_or_else(bad)?;
    let n = space
        .iter()
        .find_map(|(kind, b)| {
            (*kind == 0x01 && b.len() >= 12)
                .then(|| u64::from_le_bytes(b[4..12].try_into().unwrap()))
        })
        .ok_or_else(bad)?;
    if n > 1 << 32 {
        return Err(bad());
    }
    let mut bytes = vec![0u8; 8 * n as usize];
    read_at(file, path, data, &mut bytes)?;
    Ok(bytes
        .chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
        .collect())
}

/// The messages (type, body) of a header chunk's message area.
fn messages(mut area: &[u8]) -> Vec<(u8, Vec<u8>)> {
    let mut out = Vec::new();
    while area.len() >= 4 {
        let kind = area[0];
        let size = u16::from_le_bytes([area[1], area[2]]) as usize;
        if area.len() < 4 + size {
            break;
        }
        out.push((kind, area[4..4 + size].to_vec()));
        area = &area[4 + size..];
    }
    out
}
