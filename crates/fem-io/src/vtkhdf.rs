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
use crate::hdf5::{self, ChunkEntry, Dtype, Message, UNDEF};
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
/// Most fields a file compresses: each adds a chunk of at most 51 bytes to the commit block,
/// which stays within a page (beyond, the fields are written raw).
const MAX_CHUNKED_FIELDS: usize = 64;

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
    /// Deflate level of the fields (after a byte shuffle), `None` for raw fields.
    deflate: Option<u32>,
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
        /// A chunked field (its index in [`Layout::chunked`]): its layout is in the commit
        /// block.
        chunked: Option<usize>,
    },
}

/// A field stored in chunks, one a step, shuffled and deflated.
#[derive(Clone, Debug)]
struct ChunkedField {
    /// The chunk's dimensions (`[n]` or `[n, c]`).
    chunk: Vec<u64>,
    /// Bytes of an element.
    element: usize,
    /// Bytes of a chunk before the filters.
    raw: u64,
    /// The regions of the two copies of its fixed-array index.
    index: [usize; 2],
    /// The deflate level.
    level: u32,
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
    /// The fields stored in chunks (point fields, then cell fields), empty when the fields
    /// are raw.
    chunked: Vec<ChunkedField>,
    /// Where the chunks start (they follow one another, step by step, field by field).
    chunks_at: u64,
    /// Page bits of the fixed arrays (at least ⌈log2 capacity⌉: not paged).
    page_bits: u8,
    /// Address of the root group's header.
    root: u64,
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
        // Chunked fields (one chunk a step, below 4 GiB as HDF5 requires) have no region of
        // their own but the two copies of their index.
        let slab = |c: usize, n: u64| value.size() as u64 * c as u64 * n;
        let chunked = plan.deflate.is_some()
            && shape.point_fields.len() + shape.cell_fields.len() <= MAX_CHUNKED_FIELDS
            && shape
                .point_fields
                .iter()
                .map(|(_, c)| slab(*c, total.points))
                .chain(shape.cell_fields.iter().map(|(_, c)| slab(*c, total.cells)))
                .all(|b| b > 0 && b < u32::MAX as u64);
        let data_slots = if chunked { 0 } else { f };
        let mut chunk_fields = Vec::new();
        for (c, n) in shape
            .point_fields
            .iter()
            .map(|(_, c)| (*c, total.points))
            .chain(shape.cell_fields.iter().map(|(_, c)| (*c, total.cells)))
            .filter(|_| chunked)
        {
            let raw = slab(c, n);
            let len = hdf5::fixed_array_len(f, raw);
            chunk_fields.push(ChunkedField {
                chunk: if c == 1 { vec![n] } else { vec![n, c as u64] },
                element: value.size(),
                raw,
                index: [region(len), region(len)],
                level: plan.deflate.unwrap_or(0),
            });
        }
        for (_, c) in &shape.point_fields {
            ix.point_data
                .push(region(slab(*c, total.points) * data_slots));
        }
        ix.ghost = shape.ghost.then(|| region(total.points));
        for (_, c) in &shape.cell_fields {
            ix.cell_data
                .push(region(slab(*c, total.cells) * data_slots));
        }
        let page_bits = (64 - (f.max(2) - 1).leading_zeros()) as u8;

        // The object headers, children after their group.
        let i64s = |n: u64| (Dtype::I64, vec![n]);
        let mut objects: Vec<Object> = Vec::new();
        let dataset = |objects: &mut Vec<Object>, (dtype, dims): (Dtype, Vec<u64>), region| {
            objects.push(Object::Dataset {
                dtype,
                dims,
                region,
                commit: false,
                chunked: None,
            });
            objects.len() - 1
        };
        let mut next_chunked = 0;
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
                let at = dataset(&mut objects, (value, field_dims(n, *c)), r);
                if chunked {
                    if let Object::Dataset { chunked, .. } = &mut objects[at] {
                        *chunked = Some(next_chunked);
                    }
                    next_chunked += 1;
                }
                children.push((name.clone(), at));
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
            chunked: None,
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
            plan.deflate.map_or(-1, i64::from),
        ] {
            layout_values.extend(v.to_le_bytes());
        }
        let version: Vec<u8> = [2i64, 0].iter().flat_map(|v| v.to_le_bytes()).collect();
        objects[0] = Object::Group {
            attributes: vec![
                Message::attribute(
                    LAYOUT_ATTRIBUTE,
                    Dtype::I64,
                    &[LAYOUT_VALUES as u64],
                    &layout_values,
                ),
                Message::attribute("Version", Dtype::I64, &[2], &version),
                Message::attribute("Type", Dtype::Str(16), &[], b"UnstructuredGrid"),
            ],
            links,
            commit: false,
        };

        // Addresses: headers from byte 48, the commit block on the next page, then the
        // regions, each 8-byte aligned.
        let commit_lens = commit_chunk_lens(f, &chunk_fields, page_bits);
        let commit_len: u64 = commit_lens.iter().sum();
        debug_assert!(commit_len <= PAGE, "the commit block fits in a page");
        let dummy = vec![Region::default(); sizes.len()];
        let zeros = vec![0u64; objects.len()];
        let first = headers(&objects, &zeros, &dummy, 0, &commit_lens, &chunk_fields);
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
        let chunks_at = at.div_ceil(8) * 8;
        let end = chunks_at
            + f * chunk_fields
                .iter()
                .map(|c: &ChunkedField| c.raw)
                .sum::<u64>();
        let built = headers(
            &objects,
            &addresses,
            &regions,
            commit_at,
            &commit_lens,
            &chunk_fields,
        );
        let mut metadata = hdf5::superblock(end, addresses[1]);
        for h in built {
            metadata.extend(h);
        }
        Layout {
            plan,
            chunked: chunk_fields,
            chunks_at,
            page_bits,
            root: addresses[1],
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

impl Layout {
    /// The commit block publishing `n` steps: the continuation chunks of `Steps` (the
    /// attribute `NSteps = n`), of `Steps/Values` (its dataspace, `n` of at most `capacity`
    /// times) and of every chunked field (its layout, pointing at index copy
    /// [`published_copy`]`(n)`).
    fn commit_block(&self, n: u64) -> Vec<u8> {
        self.commit_block_at(n, published_copy(n))
    }

    /// The commit block of `n` steps pointing at index copy `copy`.
    fn commit_block_at(&self, n: u64, copy: usize) -> Vec<u8> {
        let f = self.plan.capacity;
        let mut out = steps_chunk(n);
        out.extend(values_chunk(n, f, self.region(self.index.values).address));
        for c in &self.chunked {
            out.extend(field_chunk(
                c,
                self.page_bits,
                self.region(c.index[copy]).address,
            ));
        }
        out
    }

    /// The bytes of index copy `copy` of chunked field `i` when `n` steps are published
    /// and `entries` are the field's chunks: the published copy lists the `n` chunks, the
    /// other one the `n − 1` before (what it held when it was last written).
    fn index_copy(&self, i: usize, copy: usize, n: u64, entries: &[ChunkEntry]) -> Vec<u8> {
        let c = &self.chunked[i];
        let listed = if copy == published_copy(n) {
            n
        } else {
            n.saturating_sub(1)
        };
        hdf5::fixed_array(
            self.region(c.index[copy]).address,
            self.plan.capacity,
            c.raw,
            self.page_bits,
            &entries[..listed as usize],
        )
    }
}

/// The index copy a commit block of `n` steps points at: step `k` rewrites copy `k mod 2`
/// and publishes it, so the other copy, which the file's readers may be using, is never
/// written while it is published.
fn published_copy(n: u64) -> usize {
    ((n + 1) % 2) as usize
}

/// The continuation chunk holding a chunked field's layout.
fn field_chunk(c: &ChunkedField, page_bits: u8, index: u64) -> Vec<u8> {
    hdf5::continuation_chunk(&[Message::chunked_fixed_array(
        &c.chunk, c.element, page_bits, index,
    )])
}

/// Bytes of the commit block's chunks: `Steps`, `Steps/Values`, then one per chunked field.
fn commit_chunk_lens(capacity: u64, chunked: &[ChunkedField], page_bits: u8) -> Vec<u64> {
    let mut lens = vec![
        steps_chunk(0).len() as u64,
        values_chunk(0, capacity, 0).len() as u64,
    ];
    lens.extend(
        chunked
            .iter()
            .map(|c| field_chunk(c, page_bits, 0).len() as u64),
    );
    lens
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
    commit_lens: &[u64],
    chunked_fields: &[ChunkedField],
) -> Vec<Vec<u8>> {
    let steps_len = commit_lens[0];
    let values_len = commit_lens[1];
    // Where each commit chunk starts.
    let mut starts = Vec::with_capacity(commit_lens.len());
    let mut at = commit_at;
    for len in commit_lens {
        starts.push(at);
        at += len;
    }
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
                chunked: Some(i),
                ..
            } => {
                let c = &chunked_fields[*i];
                hdf5::object_header(&[
                    Message::dataspace(dims, None),
                    Message::datatype(*dtype),
                    Message::fill_value_incremental(),
                    Message::shuffle_deflate(c.element, c.level),
                    Message::continuation(starts[2 + i], commit_lens[2 + i]),
                ])
            }
            Object::Dataset {
                dtype,
                dims,
                region,
                commit,
                chunked: None,
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
    let bytes = 8 * LAYOUT_VALUES;
    let m = Message::attribute(
        LAYOUT_ATTRIBUTE,
        Dtype::I64,
        &[LAYOUT_VALUES as u64],
        &vec![0u8; bytes],
    );
    (hdf5::SUPERBLOCK_LEN + hdf5::OBJECT_HEADER_PREFIX + 4 + m.body().len() - bytes) as u64
}

/// Values of the `fem_layout` attribute: magic, capacity, moving, precision, fingerprint,
/// deflate level (−1 for none).
const LAYOUT_VALUES: usize = 6;

/// What a resumed series found in its file.
#[derive(Clone, Debug)]
struct Found {
    capacity: u64,
    moving: bool,
    precision: i64,
    fingerprint: i64,
    deflate: i64,
    times: Vec<f64>,
}

/// Where the chunks of a chunked file are: every field's chunks so far and the end of the
/// last one.
#[derive(Clone, Debug, Default)]
struct Chunks {
    entries: Vec<Vec<ChunkEntry>>,
    end: u64,
    /// The file is cut at `end` (and the superblock says so): it is extended to the layout's
    /// size before the next step.
    trimmed: bool,
}

/// A step of a chunked file, its fields encoded, for the compressing thread.
struct ChunkJob {
    k: u64,
    time: f64,
    points: Option<Vec<u8>>,
    fields: Vec<Vec<u8>>,
}

/// What the compressing thread gives back: the file, the chunks, and how the step went.
type Pending = std::thread::JoinHandle<(File, Chunks, Result<(), OutputError>)>;

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
    /// Deflate level of the fields, `None` for raw fields.
    deflate: Option<u32>,
    /// Compress and write each step on a thread of its own while the caller goes on.
    background: bool,
    chunks: Chunks,
    /// The step being compressed and written.
    pending: Option<Pending>,
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
            deflate: None,
            background: true,
            chunks: Chunks::default(),
            pending: None,
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

    /// Compresses the fields: each field of each step one HDF5 chunk, its bytes shuffled
    /// (grouped by significance) then deflated at `level` (1–9; HDF5's filters 2 and 1, which
    /// every HDF5 reader has), stored raw when that does not make it smaller. `None` (the
    /// default of a series) writes the fields raw and contiguous. Set before the first frame;
    /// a resumed series must be set as the run that wrote the file was.
    pub fn set_deflate(&mut self, level: Option<u32>) {
        self.deflate = level.map(|l| l.clamp(1, 9));
    }

    /// Whether a compressed step is written by a thread of its own while the caller goes on
    /// (default `true`); the next frame, [`flush`](Self::flush) and drop wait for it.
    pub fn set_background(&mut self, background: bool) {
        self.background = background;
    }

    /// Waits until every frame given is written and published, and cuts a compressed file to
    /// its end (the chunks are placed within a sparse file laid out for the raw size).
    ///
    /// # Errors
    /// The error of a step written in the background (that step is not published), or
    /// [`OutputError::Io`] on a file error.
    pub fn flush(&mut self) -> Result<(), OutputError> {
        self.wait()?;
        let Some(state) = &self.layout else {
            return Ok(());
        };
        let layout = Layout::new(state.plan.clone());
        if layout.chunked.is_empty() || self.chunks.trimmed {
            return Ok(());
        }
        let path = self.path.clone();
        let end = self.chunks.end;
        let file = self.file.as_mut().expect("the file is open");
        // The superblock first: a file longer than its end-of-file address reads, a
        // shorter one does not.
        write_at(file, &path, 0, &hdf5::superblock(end, layout.root))?;
        file.set_len(end)
            .map_err(|e| OutputError::io("truncate", &path, e))?;
        self.chunks.trimmed = true;
        Ok(())
    }

    /// Waits for the step written in the background, if any.
    fn wait(&mut self) -> Result<(), OutputError> {
        let Some(pending) = self.pending.take() else {
            return Ok(());
        };
        let (file, chunks, result) = pending
            .join()
            .unwrap_or_else(|_| panic!("the thread writing {} panicked", self.path.display()));
        self.file = Some(file);
        self.chunks = chunks;
        if result.is_err() {
            // The step was not published.
            self.times.pop();
        }
        result
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
        self.wait()?;
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
                deflate: self.deflate,
                shape: shape.clone(),
            };
            let layout = Layout::new(plan.clone());
            self.chunks = Chunks {
                entries: vec![Vec::new(); layout.chunked.len()],
                end: layout.chunks_at,
                trimmed: false,
            };
            let mut file = self.file.take().expect("the file is open");
            write_new(
                &mut file,
                &path,
                &layout,
                parts,
                &static_points,
                None,
                &self.chunks.entries,
            )?;
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
        if found.deflate != self.deflate.map_or(-1, i64::from) {
            let shown = |d: i64| {
                if d < 0 {
                    "raw fields".to_string()
                } else {
                    format!("fields compressed at deflate level {d}")
                }
            };
            return Err(OutputError::invalid(
                &path,
                format!(
                    "it holds {} and this run writes {}: the run cannot resume",
                    shown(found.deflate),
                    shown(self.deflate.map_or(-1, i64::from))
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
            deflate: self.deflate,
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
        let n = self.times.len() as u64;
        if !layout.chunked.is_empty() {
            self.chunks = read_chunks(self.file(), &path, &layout, found.times.len() as u64, n)?;
        }
        if plan.capacity < self.capacity {
            let mut grown = plan;
            grown.capacity = self.capacity;
            self.relay(grown)?;
        } else if layout.chunked.is_empty() {
            // Drop the steps past the checkpoint.
            let block = layout.commit_block(n);
            let at = layout.commit_at;
            write_at(self.file(), &path, at, &block)?;
        } else {
            let published = published_copy(found.times.len() as u64);
            let file = self.file.as_mut().expect("the file is open");
            republish(file, &path, &layout, &self.chunks, n, published)?;
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
        let mut chunks = self.chunks.clone();
        let result = (|| {
            let mut out = create_rw(&tmp)?;
            let file = self.file.as_mut().expect("the file is open");
            copy_layout(file, &path, &old, &mut out, &tmp, &new, n, &mut chunks)?;
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
                self.chunks = chunks;
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
        if !layout.chunked.is_empty() {
            return self.write_chunked(k, time, parts, layout);
        }
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
        write_at(file, &path, layout.commit_at, &layout.commit_block(k + 1))?;
        if self.fsync {
            file.sync_data()
                .map_err(|e| OutputError::io("fsync", &path, e))?;
        }
        Ok(())
    }

    /// Encodes step `k` of a chunked file and compresses, writes and publishes it, on a
    /// thread of its own when [`set_background`](Self::set_background) says so.
    fn write_chunked(
        &mut self,
        k: u64,
        time: f64,
        parts: &[Frame<'_>],
        layout: Layout,
    ) -> Result<(), OutputError> {
        let path = self.path.clone();
        let plan = &layout.plan;
        let value = plan.precision.dtype();
        let points = plan.moving.then(|| {
            parts
                .iter()
                .flat_map(|p| p.points.iter().flatten().flat_map(|v| v.to_le_bytes()))
                .collect()
        });
        let mut fields = Vec::with_capacity(layout.chunked.len());
        for (name, point) in plan
            .shape
            .point_fields
            .iter()
            .map(|(n, _)| (n, true))
            .chain(plan.shape.cell_fields.iter().map(|(n, _)| (n, false)))
        {
            let mut bytes = Vec::new();
            encode_field(&mut bytes, parts, name, point, value, &path)?;
            fields.push(bytes);
        }
        let job = ChunkJob {
            k,
            time,
            points,
            fields,
        };
        let mut file = self.file.take().expect("the file is open");
        let mut chunks = std::mem::take(&mut self.chunks);
        let fsync = self.fsync;
        if !self.background {
            let result = write_chunked_step(&mut file, &path, &layout, &mut chunks, &job, fsync);
            self.file = Some(file);
            self.chunks = chunks;
            return result;
        }
        let spawned = std::thread::Builder::new()
            .name("vtkhdf".into())
            .spawn(move || {
                let result =
                    write_chunked_step(&mut file, &path, &layout, &mut chunks, &job, fsync);
                (file, chunks, result)
            })
            .map_err(|e| OutputError::io("start the thread writing", &self.path, e))?;
        self.pending = Some(spawned);
        Ok(())
    }
}

impl Drop for VtkHdfSeries {
    /// Waits for the step written in the background and cuts the file to its end (errors
    /// are the caller's to see through [`VtkHdfSeries::flush`]).
    fn drop(&mut self) {
        let _ = self.flush();
    }
}

/// Shuffles the bytes of `raw` (elements of `element` bytes: every element's first byte,
/// then every second byte, …; HDF5's filter 2) and deflates them (zlib format, HDF5's filter
/// 1). Returns the bytes to store and the filter mask: raw bytes with both filters skipped
/// (mask 3) when compressing does not make them smaller.
fn filter(raw: &[u8], element: usize, level: u32) -> (Vec<u8>, u32) {
    let n = raw.len() / element;
    let mut shuffled = vec![0u8; raw.len()];
    if element > 1 && n > 1 {
        for (b, out) in shuffled.chunks_exact_mut(n).enumerate().take(element) {
            for (i, o) in out.iter_mut().enumerate() {
                *o = raw[i * element + b];
            }
        }
    } else {
        shuffled.copy_from_slice(raw);
    }
    let mut encoder = flate2::write::ZlibEncoder::new(
        Vec::with_capacity(raw.len() / 2),
        flate2::Compression::new(level),
    );
    let packed = encoder
        .write_all(&shuffled)
        .and_then(|()| encoder.finish())
        .ok();
    match packed {
        Some(p) if p.len() < raw.len() => (p, 0),
        _ => (raw.to_vec(), 0b11),
    }
}

/// Compresses and writes step `job.k` of a chunked file after the chunks in `chunks`, lists
/// the chunks in the index copy the step publishes, and publishes it (one write inside one
/// page).
fn write_chunked_step(
    file: &mut File,
    path: &Path,
    layout: &Layout,
    chunks: &mut Chunks,
    job: &ChunkJob,
    fsync: bool,
) -> Result<(), OutputError> {
    let k = job.k;
    if chunks.trimmed {
        extend(file, path, layout)?;
        chunks.trimmed = false;
    }
    if let Some(points) = &job.points {
        let at = layout.slot(layout.index.points, points.len() as u64, k);
        write_at(file, path, at, points)?;
    }
    let mut at = chunks.end;
    for (i, raw) in job.fields.iter().enumerate() {
        let (bytes, mask) = filter(raw, layout.chunked[i].element, layout.chunked[i].level);
        write_at(file, path, at, &bytes)?;
        let entries = &mut chunks.entries[i];
        entries.truncate(k as usize);
        entries.push(ChunkEntry {
            address: at,
            size: bytes.len() as u64,
            mask,
        });
        at += bytes.len() as u64;
    }
    write_at(
        file,
        path,
        layout.slot(layout.index.values, 8, k),
        &job.time.to_le_bytes(),
    )?;
    let n = k + 1;
    let copy = published_copy(n);
    for (i, c) in layout.chunked.iter().enumerate() {
        write_at(
            file,
            path,
            layout.region(c.index[copy]).address,
            &layout.index_copy(i, copy, n, &chunks.entries[i]),
        )?;
    }
    if fsync {
        file.sync_data()
            .map_err(|e| OutputError::io("fsync", path, e))?;
    }
    write_at(file, path, layout.commit_at, &layout.commit_block(n))?;
    if fsync {
        file.sync_data()
            .map_err(|e| OutputError::io("fsync", path, e))?;
    }
    chunks.end = at;
    Ok(())
}

/// Gives a trimmed chunked file its laid-out size again: the length first, then the
/// superblock's end-of-file address.
fn extend(file: &mut File, path: &Path, layout: &Layout) -> Result<(), OutputError> {
    file.set_len(layout.end)
        .map_err(|e| OutputError::io("allocate", path, e))?;
    write_at(file, path, 0, &hdf5::superblock(layout.end, layout.root))
}

/// The chunks of the first `n` steps of a chunked file in which `published` steps are
/// published (read from the index copy it publishes).
fn read_chunks(
    file: &mut File,
    path: &Path,
    layout: &Layout,
    published: u64,
    n: u64,
) -> Result<Chunks, OutputError> {
    let bad = || {
        OutputError::invalid(
            path,
            "its index of compressed steps is damaged: the run cannot resume",
        )
    };
    let copy = published_copy(published);
    let mut entries = Vec::with_capacity(layout.chunked.len());
    let mut end = layout.chunks_at;
    for c in &layout.chunked {
        let r = layout.region(c.index[copy]);
        let mut bytes = vec![0u8; r.size as usize];
        read_at(file, path, r.address, &mut bytes)?;
        let mut listed = hdf5::read_fixed_array(&bytes, c.raw).ok_or_else(bad)?;
        if (listed.len() as u64) < n {
            return Err(bad());
        }
        listed.truncate(n as usize);
        for e in &listed {
            if e.address < layout.chunks_at || e.address.saturating_add(e.size) > layout.end {
                return Err(bad());
            }
            end = end.max(e.address + e.size);
        }
        entries.push(listed);
    }
    Ok(Chunks {
        entries,
        end,
        trimmed: false,
    })
}

/// Publishes the first `n` steps of a chunked file whose commit block publishes index copy
/// `published`, leaving both copies as an uninterrupted run leaves them after `n` steps, and
/// never writing the copy a reader may be using.
fn republish(
    file: &mut File,
    path: &Path,
    layout: &Layout,
    chunks: &Chunks,
    n: u64,
    published: usize,
) -> Result<(), OutputError> {
    extend(file, path, layout)?;
    let target = published_copy(n);
    let write_copy = |file: &mut File, copy: usize, listed: u64| -> Result<(), OutputError> {
        for (i, c) in layout.chunked.iter().enumerate() {
            let bytes = hdf5::fixed_array(
                layout.region(c.index[copy]).address,
                layout.plan.capacity,
                c.raw,
                layout.page_bits,
                &chunks.entries[i][..listed as usize],
            );
            write_at(file, path, layout.region(c.index[copy]).address, &bytes)?;
        }
        Ok(())
    };
    if published == target {
        // The other copy lists the `n` steps and is published for a moment.
        write_copy(file, 1 - target, n)?;
        write_at(
            file,
            path,
            layout.commit_at,
            &layout.commit_block_at(n, 1 - target),
        )?;
    }
    write_copy(file, target, n)?;
    write_at(file, path, layout.commit_at, &layout.commit_block(n))?;
    write_copy(file, 1 - target, n.saturating_sub(1))
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
    entries: &[Vec<ChunkEntry>],
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
    for (i, c) in layout.chunked.iter().enumerate() {
        for copy in 0..2 {
            write_at(
                file,
                path,
                layout.region(c.index[copy]).address,
                &layout.index_copy(i, copy, n, &entries[i]),
            )?;
        }
    }
    write_at(file, path, layout.commit_at, &layout.commit_block(n))?;
    write_at(file, path, 0, &layout.metadata)?;
    Ok(())
}

/// Writes `new` into `out` with the static data and the first `n` steps of `old` (in `file`),
/// whose chunks are `chunks` (made `new`'s).
#[allow(clippy::too_many_arguments)]
fn copy_layout(
    file: &mut File,
    path: &Path,
    old: &Layout,
    out: &mut File,
    out_path: &Path,
    new: &Layout,
    n: u64,
    chunks: &mut Chunks,
) -> Result<(), OutputError> {
    // The chunks keep their order (step, then field) and sizes: only their addresses move.
    let mut moved = Chunks {
        entries: vec![Vec::new(); new.chunked.len()],
        end: new.chunks_at,
        trimmed: false,
    };
    let mut from = Vec::new();
    for k in 0..n as usize {
        for (i, entries) in chunks.entries.iter().enumerate() {
            let e = entries[k];
            from.push((e.address, moved.end, e.size));
            moved.entries[i].push(ChunkEntry {
                address: moved.end,
                ..e
            });
            moved.end += e.size;
        }
    }
    write_new(out, out_path, new, &[], &[], Some(n), &moved.entries)?;
    *chunks = moved;
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
    for (at, to, len) in from {
        copy(at, to, len, &mut buffer)?;
    }
    if !new.chunked.is_empty() {
        return Ok(());
    }
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
    let mut values = [0u8; 8 * LAYOUT_VALUES];
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
        deflate: v(5),
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
