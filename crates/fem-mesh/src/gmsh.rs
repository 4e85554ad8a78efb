//! Reader for Gmsh MSH 4.1 files (ASCII and binary), built on `mshio`.
//!
//! `mshio` parses `$Entities`, `$Nodes` and `$Elements`. This module adds what it
//! leaves out or gets wrong:
//!
//! * the `$MeshFormat` line is checked first, so that other versions get a clear
//!   [`MeshError::UnsupportedVersion`] instead of a parser backtrace;
//! * `$PhysicalNames` (plain text even in binary files) is read here;
//! * node tags are read here too: when the tags are dense (no gaps) `mshio`
//!   drops them and assumes they increase in file order, which Gmsh does not
//!   guarantee;
//! * partitioned meshes (silently wrong in `mshio`) and parametric nodes (an
//!   error deep inside `mshio`) are refused with a clear message;
//! * `mshio` panics on some corrupt inputs; such panics are caught and reported
//!   as [`MeshError::Parse`].

use std::collections::{BTreeMap, HashMap};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;

use mshio::error::MshParserErrorKind;

use crate::cell::CellKind;
use crate::error::MeshError;
use crate::mesh::{CellBlock, Mesh, PhysicalGroup};

/// The largest `.msh` file read: 4 GiB. A mesh that large holds some 1e8 nodes; beyond it
/// the file is refused before it is read.
pub const MAX_MSH_FILE: u64 = 4 << 30;

/// What a mesh file holds, as far as its headers say, for a caller that checks what reading
/// it would cost before it is read ([`read_msh_within`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MshSize {
    /// Bytes of the file.
    pub file_bytes: u64,
    /// Nodes announced by `$Nodes` (0 before the headers are read).
    pub nodes: u64,
    /// Elements announced by `$Elements` (0 before the headers are read).
    pub elements: u64,
    /// The largest number of nodes of an element in the file.
    pub nodes_per_element: u64,
}

/// Reads a Gmsh MSH 4.1 file (ASCII or binary) and [validates](Mesh::validate) it.
///
/// Every element becomes a cell; elements of the same kind are merged into
/// one [`CellBlock`] per kind, in order of first appearance. Each physical
/// group collects the elements of the geometric entities carrying its tag;
/// unnamed groups are called `"physical_{dim}_{tag}"`. Groups are sorted by
/// `(dim, tag)`.
///
/// Only regular files of at most [`MAX_MSH_FILE`] bytes are read (a device such as
/// `/dev/zero` or a pipe is refused before it is opened); the counts in the `$Nodes` and
/// `$Elements` headers must agree with their blocks.
pub fn read_msh(path: &Path) -> Result<Mesh, MeshError> {
    read_msh_within(path, &mut |_| Ok(()))
}

/// Like [`read_msh`], asking `accept` before anything large is allocated: once with the file
/// size alone (before the file is read), then with the counts of its headers (before the
/// mesh is built). An `Err(message)` of `accept` refuses the file with that message
/// ([`MeshError::TooLarge`]).
pub fn read_msh_within(
    path: &Path,
    accept: &mut dyn FnMut(&MshSize) -> Result<(), String>,
) -> Result<Mesh, MeshError> {
    let too_large = |message: String| MeshError::TooLarge {
        path: path.to_path_buf(),
        message,
    };
    let io = |source| MeshError::Io {
        path: path.to_path_buf(),
        source,
    };
    let metadata = std::fs::metadata(path).map_err(io)?;
    if !metadata.is_file() {
        return Err(MeshError::NotAFile {
            path: path.to_path_buf(),
            kind: file_kind(&metadata),
        });
    }
    let file_bytes = metadata.len();
    if file_bytes > MAX_MSH_FILE {
        return Err(too_large(format!(
            "the file has {file_bytes} bytes, more than the {MAX_MSH_FILE} (4 GiB) a mesh file may have"
        )));
    }
    check_start(path, file_bytes)?;
    accept(&MshSize {
        file_bytes,
        ..MshSize::default()
    })
    .map_err(too_large)?;
    let bytes = read_capped(path, file_bytes).map_err(io)?;
    read_msh_bytes_within(&bytes, path, accept)
}

/// Refuses a file that does not start with `$MeshFormat` (blank lines aside) from its first
/// 64 KiB, before the whole file is read: a large file of something else costs no memory.
fn check_start(path: &Path, file_bytes: u64) -> Result<(), MeshError> {
    use std::io::Read;
    const PREFIX: u64 = 64 << 10;
    let mut prefix = Vec::with_capacity(PREFIX.min(file_bytes) as usize);
    std::fs::File::open(path)
        .and_then(|f| f.take(PREFIX).read_to_end(&mut prefix))
        .map_err(|source| MeshError::Io {
            path: path.to_path_buf(),
            source,
        })?;
    let start = prefix
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .map(|i| &prefix[i..]);
    let message = match start {
        None if file_bytes <= PREFIX => "the file is empty",
        Some(rest) if rest.starts_with(b"$MeshFormat") => return Ok(()),
        Some(rest) if b"$MeshFormat".starts_with(rest) => return Ok(()),
        _ => "it does not start with $MeshFormat (not a Gmsh .msh file)",
    };
    Err(MeshError::Parse {
        path: path.to_path_buf(),
        message: message.into(),
    })
}

/// What a path that is not a regular file is, for messages.
pub fn file_kind(metadata: &std::fs::Metadata) -> &'static str {
    let t = metadata.file_type();
    if t.is_dir() {
        return "a folder";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_char_device() {
            return "a character device";
        }
        if t.is_block_device() {
            return "a block device";
        }
        if t.is_fifo() {
            return "a named pipe";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    "not a regular file"
}

/// Reads at most `expected` bytes of `path` (its size when checked): a file that grows while
/// it is read is not followed past that.
fn read_capped(path: &Path, expected: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let file = std::fs::File::open(path)?;
    let mut bytes = Vec::with_capacity(usize::try_from(expected).unwrap_or(0));
    file.take(expected).read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// Like [`read_msh`], for a file already in memory; `path` is only used in
/// error messages.
pub fn read_msh_bytes(bytes: &[u8], path: &Path) -> Result<Mesh, MeshError> {
    read_msh_bytes_within(bytes, path, &mut |_| Ok(()))
}

/// Like [`read_msh_within`], for a file already in memory.
pub fn read_msh_bytes_within(
    bytes: &[u8],
    path: &Path,
    accept: &mut dyn FnMut(&MshSize) -> Result<(), String>,
) -> Result<Mesh, MeshError> {
    let parse_err = |message: String| MeshError::Parse {
        path: path.to_path_buf(),
        message,
    };

    let header = read_header(bytes).map_err(|e| e.into_error(path))?;
    if find_section(bytes, b"$PartitionedEntities").is_some() {
        return Err(MeshError::Partitioned {
            path: path.to_path_buf(),
        });
    }
    // One of each: `mshio` reads every copy of a section, our checks below the first.
    for name in ["$Entities", "$Nodes", "$Elements", "$PhysicalNames"] {
        if let Some(at) = second_section(bytes, name.as_bytes()) {
            let line = bytes[..at].iter().filter(|&&b| b == b'\n').count();
            return Err(parse_err(format!(
                "a second {name} section at line {line}; a mesh file has at most one"
            )));
        }
    }
    let names = match find_section(bytes, b"$PhysicalNames") {
        Some(start) => read_physical_names(&bytes[start..]).map_err(parse_err)?,
        None => HashMap::new(),
    };
    let node_tags = match find_section(bytes, b"$Nodes") {
        Some(start) => read_node_tags(bytes, start, &header).map_err(|e| e.into_error(path))?,
        None => return Err(parse_err("no $Nodes section".into())),
    };
    let elements = match find_section(bytes, b"$Elements") {
        Some(start) => scan_elements(bytes, start, &header).map_err(|e| e.into_error(path))?,
        None => return Err(parse_err("no $Elements section".into())),
    };
    accept(&MshSize {
        file_bytes: bytes.len() as u64,
        nodes: node_tags.iter().map(|b| b.len() as u64).sum(),
        elements: elements.total,
        nodes_per_element: elements.max_nodes,
    })
    .map_err(|message| MeshError::TooLarge {
        path: path.to_path_buf(),
        message,
    })?;

    let msh = parse_with_mshio(bytes, header.binary.is_some()).map_err(parse_err)?;
    let mut mesh = build_mesh(&msh, &node_tags, &names, path)?;
    mesh.groups.sort_by_key(|g| (g.dim, g.tag));
    mesh.validate().map_err(|e| e.with_path(path))?;
    Ok(mesh)
}

/// Errors found before the file is handed to `mshio`.
enum PreError {
    Parse(String),
    Version(String),
    Parametric,
    Unsupported { gmsh_type: i32, count: usize },
}

impl PreError {
    fn into_error(self, path: &Path) -> MeshError {
        let path = path.to_path_buf();
        match self {
            PreError::Parse(message) => MeshError::Parse { path, message },
            PreError::Version(found) => MeshError::UnsupportedVersion { path, found },
            PreError::Parametric => MeshError::ParametricNodes { path },
            PreError::Unsupported { gmsh_type, count } => MeshError::UnsupportedCell {
                path,
                gmsh_type,
                gmsh_name: gmsh_type_name(gmsh_type),
                count,
            },
        }
    }
}

impl From<String> for PreError {
    fn from(s: String) -> Self {
        PreError::Parse(s)
    }
}

/// What the `$MeshFormat` section says.
struct Header {
    /// `None` for ASCII, `Some(little_endian)` for binary.
    binary: Option<bool>,
    /// Size of `size_t` in binary files.
    size_t: usize,
}

/// Lines of `bytes`, without line terminators.
fn lines(bytes: &[u8]) -> impl Iterator<Item = &[u8]> {
    bytes
        .split(|&b| b == b'\n')
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
}

fn read_header(bytes: &[u8]) -> Result<Header, PreError> {
    if bytes.iter().all(|b| b.is_ascii_whitespace()) {
        return Err(PreError::Parse("the file is empty".into()));
    }
    let mut it = lines(bytes).filter(|l| !l.trim_ascii().is_empty());
    if it.next().map(<[u8]>::trim_ascii) != Some(b"$MeshFormat".as_slice()) {
        return Err(PreError::Parse(
            "it does not start with $MeshFormat (not a Gmsh .msh file)".into(),
        ));
    }
    let line = it.next().unwrap_or_default();
    let text = String::from_utf8_lossy(line);
    let fields: Vec<&str> = text.split_ascii_whitespace().collect();
    let version = fields.first().copied().unwrap_or("");
    match version.parse::<f64>() {
        Ok(4.1) => {}
        Ok(_) => return Err(PreError::Version(version.to_string())),
        Err(_) => {
            return Err(PreError::Parse(format!(
                "malformed $MeshFormat line {text:?} (expected \"4.1 0|1 8\")"
            )));
        }
    }
    let file_type = fields.get(1).copied().unwrap_or("");
    let size_t = fields.get(2).and_then(|s| s.parse::<usize>().ok());
    let (binary, size_t) = match (file_type, size_t) {
        ("0" | "1", Some(n)) if n != 8 => {
            return Err(PreError::Parse(format!(
                "the $MeshFormat line {text:?} gives a data size of {n} bytes; fem reads the \
                 8-byte size Gmsh writes (\"4.1 0 8\" or \"4.1 1 8\")"
            )));
        }
        ("0", Some(n)) => (None, n),
        ("1", Some(n)) => {
            // The binary integer 1 follows the header line (`line` is a subslice of `bytes`).
            let start = (line.as_ptr() as usize - bytes.as_ptr() as usize) + line.len();
            let rest = &bytes[start..];
            let rest = rest.strip_prefix(b"\r").unwrap_or(rest);
            let rest = rest.strip_prefix(b"\n").unwrap_or(rest);
            match rest.get(..4) {
                Some([1, 0, 0, 0]) => (Some(true), n),
                Some([0, 0, 0, 1]) => (Some(false), n),
                _ => {
                    return Err(PreError::Parse(
                        "binary file without the endianness marker (integer 1) after the \
                         $MeshFormat line"
                            .into(),
                    ));
                }
            }
        }
        _ => {
            return Err(PreError::Parse(format!(
                "unsupported $MeshFormat line {text:?} (expected file type 0 (ASCII) or 1 \
                 (binary) and data size 8)"
            )));
        }
    };
    Ok(Header { binary, size_t })
}

/// Byte offset just after the line `$Name` (which must start a line), if present.
///
/// Binary data could in principle contain such a line by chance; section
/// markers are 7+ bytes framed by newlines, so this is not a practical concern.
fn find_section(bytes: &[u8], name: &[u8]) -> Option<usize> {
    let mut from = 0;
    while let Some(pos) = find(&bytes[from..], name) {
        let start = from + pos;
        let end = start + name.len();
        let line_start = start == 0 || bytes[start - 1] == b'\n';
        let rest = &bytes[end..];
        if line_start {
            if let Some(r) = rest.strip_prefix(b"\r\n") {
                return Some(bytes.len() - r.len());
            }
            if let Some(r) = rest.strip_prefix(b"\n") {
                return Some(bytes.len() - r.len());
            }
        }
        from = end;
    }
    None
}

/// Where a second section `name` starts (the byte after its header line), if there is one.
fn second_section(bytes: &[u8], name: &[u8]) -> Option<usize> {
    let first = find_section(bytes, name)?;
    find_section(&bytes[first..], name).map(|at| first + at)
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Parses the body of `$PhysicalNames`: `(dim, tag) -> name`.
fn read_physical_names(section: &[u8]) -> Result<HashMap<(usize, i32), String>, String> {
    let mut names = HashMap::new();
    let mut it = lines(section);
    let count: usize = it
        .next()
        .and_then(|l| std::str::from_utf8(l).ok())
        .and_then(|l| l.trim().parse().ok())
        .ok_or("$PhysicalNames: expected the number of names")?;
    for i in 0..count {
        let bad = || format!("$PhysicalNames: malformed entry {} of {count}", i + 1);
        let line = it.next().ok_or_else(bad)?;
        let line = String::from_utf8_lossy(line);
        let mut parts = line.trim().splitn(3, char::is_whitespace);
        let dim: usize = parts.next().and_then(|s| s.parse().ok()).ok_or_else(bad)?;
        let tag: i32 = parts.next().and_then(|s| s.parse().ok()).ok_or_else(bad)?;
        let name = parts.next().ok_or_else(bad)?.trim();
        let name = name
            .strip_prefix('"')
            .and_then(|n| n.strip_suffix('"'))
            .ok_or_else(bad)?;
        if dim > 3 {
            return Err(bad());
        }
        names.insert((dim, tag), name.to_string());
    }
    match it.next() {
        Some(l) if l.trim_ascii() == b"$EndPhysicalNames" => Ok(names),
        _ => Err("$PhysicalNames: expected $EndPhysicalNames after the names".into()),
    }
}

/// A number reader over the body of `$Nodes` or `$Elements`, ASCII or binary.
fn reader<'a>(
    bytes: &'a [u8],
    start: usize,
    header: &Header,
    section: &'static str,
) -> Box<dyn NumReader + 'a> {
    match header.binary {
        None => Box::new(AsciiReader {
            file: bytes,
            rest: &bytes[start..],
            section,
        }),
        Some(le) => Box::new(BinaryReader {
            rest: &bytes[start..],
            little_endian: le,
            size_t: header.size_t,
            section,
        }),
    }
}

/// Reads the node tags of every node block of the `$Nodes` section body (skipping the
/// coordinates), checking the header's counts against the blocks. Refuses parametric node
/// blocks.
fn read_node_tags(bytes: &[u8], start: usize, header: &Header) -> Result<Vec<Vec<u64>>, PreError> {
    let mut r = reader(bytes, start, header, "$Nodes");
    let at_header = r.mark();
    let n_blocks = r.size("number of node blocks")?;
    let n_nodes = r.size("number of nodes")?;
    let min_tag = r.size("minimum node tag")?;
    let max_tag = r.size("maximum node tag")?;
    if n_nodes == 0 {
        return Err(PreError::Parse("the file contains no nodes".into()));
    }
    check_header_counts(
        &*r,
        at_header,
        "node",
        [n_blocks, n_nodes, min_tag, max_tag],
        8,
    )?;
    let mut blocks = Vec::new();
    let mut total = 0u64;
    for b in 0..n_blocks {
        let what = |s: &str| format!("{s} of node block {} of {n_blocks}", b + 1);
        r.int(&what("entity dimension"))?;
        r.int(&what("entity tag"))?;
        let parametric = r.int(&what("parametric flag"))?;
        match parametric {
            0 => {}
            // Gmsh writes 1 for a block with parametric coordinates; any other value is not a
            // Gmsh file's (corrupt bytes), and says nothing about parametric coordinates.
            1 => return Err(PreError::Parametric),
            other => {
                return Err(r.error(format!(
                    "{}: found {other}, expected 0 (or 1 for a block with parametric coordinates)",
                    what("parametric flag")
                )));
            }
        }
        let n = r.size(&what("node count"))?;
        total = total.saturating_add(n);
        if total > n_nodes {
            return Err(r.error(format!(
                "the node blocks hold more nodes than the {n_nodes} announced in the header"
            )));
        }
        // Cap the preallocation by what the file can hold.
        let mut tags = Vec::with_capacity((n as usize).min(r.remaining_hint()));
        for _ in 0..n {
            let tag = r.size(&what("node tag"))?;
            if tag == 0 || tag < min_tag || tag > max_tag {
                return Err(r.error(format!(
                    "node tag {tag} is outside the range {min_tag} to {max_tag} of the header"
                )));
            }
            tags.push(tag);
        }
        r.skip_floats(3 * n, &what("node coordinates"))?;
        blocks.push(tags);
    }
    if total != n_nodes {
        return Err(r.error(format!(
            "the header announces {n_nodes} nodes but its blocks hold {total}"
        )));
    }
    r.end("$EndNodes")?;
    Ok(blocks)
}

/// Checks a section header's counts against each other and the file: `n_items ≥ n_blocks`,
/// `1 ≤ min_tag ≤ max_tag`, and at most as many items as the rest of the file can hold
/// (`min_item_bytes` each in ASCII).
fn check_header_counts(
    r: &dyn NumReader,
    at_header: usize,
    item: &str,
    [n_blocks, n_items, min_tag, max_tag]: [u64; 4],
    min_item_bytes: u64,
) -> Result<(), PreError> {
    let room = r.room(min_item_bytes);
    if n_items > room || n_blocks > room {
        return Err(r.error_at(at_header, format!(
            "the header announces {n_items} {item}(s) in {n_blocks} block(s), but the rest of the file has room for at most {room}"
        )));
    }
    if n_items > 0 && (min_tag == 0 || min_tag > max_tag) {
        return Err(r.error_at(at_header, format!(
            "the header gives the {item} tags as {min_tag} to {max_tag}: expected 1 <= minimum <= maximum"
        )));
    }
    if max_tag - min_tag.min(max_tag) < n_items.saturating_sub(1) {
        return Err(r.error_at(at_header, format!(
            "the header announces {n_items} {item}s with tags from {min_tag} to {max_tag}, which cannot hold that many distinct tags"
        )));
    }
    Ok(())
}

/// What `$Elements` holds, after checking its header against its blocks.
struct ElementScan {
    /// Elements in all blocks.
    total: u64,
    /// The most nodes of an element.
    max_nodes: u64,
}

/// Scans the `$Elements` section body: the header, every block's header and every element's
/// node tags (their count per element type; in ASCII one element per line, as Gmsh writes
/// them). Refuses element types fem does not read before they are parsed.
fn scan_elements(bytes: &[u8], start: usize, header: &Header) -> Result<ElementScan, PreError> {
    let mut r = reader(bytes, start, header, "$Elements");
    let at_header = r.mark();
    let n_blocks = r.size("number of element blocks")?;
    let n_elements = r.size("number of elements")?;
    let min_tag = r.size("minimum element tag")?;
    let max_tag = r.size("maximum element tag")?;
    if n_elements == 0 {
        return Err(PreError::Parse("the file contains no elements".into()));
    }
    check_header_counts(
        &*r,
        at_header,
        "element",
        [n_blocks, n_elements, min_tag, max_tag],
        4,
    )?;
    let mut total = 0u64;
    let mut max_nodes = 0u64;
    for b in 0..n_blocks {
        let what = |s: &str| format!("{s} of element block {} of {n_blocks}", b + 1);
        let dim = r.int(&what("entity dimension"))?;
        if !(0..=3).contains(&dim) {
            return Err(r.error(format!(
                "element block {} of {n_blocks} has entity dimension {dim}: expected 0, 1, 2 or 3",
                b + 1
            )));
        }
        r.int(&what("entity tag"))?;
        let gmsh_type = r.int(&what("element type"))?;
        let n = r.size(&what("element count"))?;
        let kind = i32::try_from(gmsh_type)
            .ok()
            .and_then(CellKind::from_gmsh_type)
            .ok_or(PreError::Unsupported {
                gmsh_type: i32::try_from(gmsh_type).unwrap_or(i32::MAX),
                count: usize::try_from(n).unwrap_or(usize::MAX),
            })?;
        total = total.saturating_add(n);
        if total > n_elements {
            return Err(r.error(format!(
                "the element blocks hold more elements than the {n_elements} announced in the header"
            )));
        }
        let per = kind.n_nodes() as u64;
        max_nodes = max_nodes.max(per);
        for i in 0..n {
            let tag = r.record(1 + per, &|| {
                format!(
                    "element {} of element block {} of {n_blocks} ({}, {} node tags after the element tag)",
                    i + 1,
                    b + 1,
                    kind.name(),
                    per
                )
            })?;
            if tag == 0 {
                return Err(r.error("element tag 0 is reserved by Gmsh".into()));
            }
        }
    }
    if total != n_elements {
        return Err(r.error(format!(
            "the header announces {n_elements} elements but its blocks hold {total}"
        )));
    }
    r.end("$EndElements")?;
    Ok(ElementScan { total, max_nodes })
}

/// Minimal number reader over an ASCII or binary section body.
trait NumReader {
    fn size(&mut self, what: &str) -> Result<u64, String>;
    fn int(&mut self, what: &str) -> Result<i64, String>;
    fn skip_floats(&mut self, n: u64, what: &str) -> Result<(), String>;
    /// `n` unsigned numbers making one record (in ASCII: exactly one line); the first.
    fn record(&mut self, n: u64, what: &dyn Fn() -> String) -> Result<u64, String>;
    /// Checks that the section ends here with `end`.
    fn end(&mut self, end: &str) -> Result<(), String>;
    /// A message about the current position.
    fn error(&self, message: String) -> PreError {
        self.error_at(self.mark(), message)
    }
    /// The current position, for [`NumReader::error_at`].
    fn mark(&self) -> usize;
    /// A message about the position `mark`.
    fn error_at(&self, mark: usize, message: String) -> PreError;
    fn remaining_hint(&self) -> usize;
    /// How many items of at least `min_item_bytes` (ASCII; binary: one size each) fit in the
    /// rest of the file.
    fn room(&self, min_item_bytes: u64) -> u64;
}

struct AsciiReader<'a> {
    /// The whole file, for line numbers.
    file: &'a [u8],
    rest: &'a [u8],
    section: &'static str,
}

impl<'a> AsciiReader<'a> {
    /// Where the reader was when `rest_len` bytes were left: `$Nodes (line 12)` (counted only
    /// for a message).
    fn at_rest(&self, rest_len: usize) -> String {
        let offset = self.file.len() - rest_len;
        let line = self.file[..offset].iter().filter(|&&b| b == b'\n').count() + 1;
        format!("{} (line {line})", self.section)
    }

    fn at(&self) -> String {
        self.at_rest(self.rest.len())
    }

    fn token(&mut self, what: &str) -> Result<&'a str, String> {
        let start = self
            .rest
            .iter()
            .position(|b| !b.is_ascii_whitespace())
            .ok_or_else(|| format!("{}: the file ends before the {what}", self.section))?;
        self.rest = &self.rest[start..];
        let len = self
            .rest
            .iter()
            .position(|b| b.is_ascii_whitespace())
            .unwrap_or(self.rest.len());
        let (tok, rest) = self.rest.split_at(len);
        let Ok(tok) = std::str::from_utf8(tok) else {
            return Err(format!(
                "{}: expected the {what}, found bytes that are not text",
                self.at()
            ));
        };
        if tok.starts_with('$') {
            return Err(format!(
                "{}: found {tok} where the {what} was expected",
                self.at()
            ));
        }
        self.rest = rest;
        Ok(tok)
    }

    fn number<T: std::str::FromStr>(&mut self, what: &str) -> Result<T, String> {
        let t = self.token(what)?;
        match t.parse() {
            Ok(v) => Ok(v),
            Err(_) => {
                let message = format!("expected the {what}, found {t:?}");
                let at = self.at_rest(self.rest.len() + t.len());
                Err(format!("{at}: {message}"))
            }
        }
    }
}

impl NumReader for AsciiReader<'_> {
    fn size(&mut self, what: &str) -> Result<u64, String> {
        self.number(what)
    }
    fn int(&mut self, what: &str) -> Result<i64, String> {
        self.number(what)
    }
    fn skip_floats(&mut self, n: u64, what: &str) -> Result<(), String> {
        for _ in 0..n {
            let t = self.token(what)?;
            if t.parse::<f64>().is_err() {
                let message = format!("expected a number in the {what}, found {t:?}");
                let at = self.at_rest(self.rest.len() + t.len());
                return Err(format!("{at}: {message}"));
            }
        }
        Ok(())
    }
    fn record(&mut self, n: u64, what: &dyn Fn() -> String) -> Result<u64, String> {
        // Skip to the start of the next non-empty line.
        let start = self
            .rest
            .iter()
            .position(|b| !b.is_ascii_whitespace())
            .ok_or_else(|| format!("{}: the file ends before {}", self.section, what()))?;
        self.rest = &self.rest[start..];
        let len = self
            .rest
            .iter()
            .position(|&b| b == b'\n')
            .unwrap_or(self.rest.len());
        let (line, rest) = self.rest.split_at(len);
        let text = String::from_utf8_lossy(line);
        if text.starts_with('$') {
            return Err(format!(
                "{}: found {} where {} was expected",
                self.at(),
                text.trim(),
                what()
            ));
        }
        let mut first = None;
        let mut found = 0u64;
        for tok in text.split_ascii_whitespace() {
            let Ok(v) = tok.parse::<u64>() else {
                return Err(format!("{}: expected {}, found {tok:?}", self.at(), what()));
            };
            first.get_or_insert(v);
            found += 1;
        }
        if found != n {
            return Err(format!(
                "{}: expected {}: {n} numbers on the line, found {found}",
                self.at(),
                what()
            ));
        }
        self.rest = rest;
        Ok(first.unwrap_or(0))
    }
    fn end(&mut self, end: &str) -> Result<(), String> {
        let at = self.at();
        let line = lines(self.rest).find(|l| !l.trim_ascii().is_empty());
        match line {
            Some(l) if l.trim_ascii() == end.as_bytes() => Ok(()),
            Some(l) => Err(format!(
                "{at}: expected {end} after the last block, found {:?}",
                String::from_utf8_lossy(l.trim_ascii())
            )),
            None => Err(format!("{}: the file ends without {end}", self.section)),
        }
    }
    fn mark(&self) -> usize {
        self.rest.len()
    }
    fn error_at(&self, mark: usize, message: String) -> PreError {
        PreError::Parse(format!("{}: {message}", self.at_rest(mark)))
    }
    fn remaining_hint(&self) -> usize {
        self.rest.len() / 2
    }
    fn room(&self, min_item_bytes: u64) -> u64 {
        self.rest.len() as u64 / min_item_bytes.max(1)
    }
}

struct BinaryReader<'a> {
    rest: &'a [u8],
    little_endian: bool,
    size_t: usize,
    section: &'static str,
}

impl BinaryReader<'_> {
    fn take(&mut self, n: usize, what: &str) -> Result<&[u8], String> {
        if self.rest.len() < n {
            return Err(format!("{}: the file ends before the {what}", self.section));
        }
        let (head, rest) = self.rest.split_at(n);
        self.rest = rest;
        Ok(head)
    }
    fn uint(&mut self, n: usize, what: &str) -> Result<u64, String> {
        let le = self.little_endian;
        let b = self.take(n, what)?;
        let mut v = 0u64;
        for i in 0..n {
            let byte = if le { b[n - 1 - i] } else { b[i] };
            v = (v << 8) | u64::from(byte);
        }
        Ok(v)
    }
}

impl NumReader for BinaryReader<'_> {
    fn size(&mut self, what: &str) -> Result<u64, String> {
        self.uint(self.size_t, what)
    }
    fn int(&mut self, what: &str) -> Result<i64, String> {
        Ok(i64::from(self.uint(4, what)? as u32 as i32))
    }
    fn skip_floats(&mut self, n: u64, what: &str) -> Result<(), String> {
        let bytes = n
            .checked_mul(8)
            .and_then(|b| usize::try_from(b).ok())
            .ok_or_else(|| format!("{}: impossible size of the {what}", self.section))?;
        self.take(bytes, what).map(|_| ())
    }
    fn record(&mut self, n: u64, what: &dyn Fn() -> String) -> Result<u64, String> {
        let needed = n.saturating_mul(self.size_t as u64);
        if (self.rest.len() as u64) < needed {
            return Err(format!("{}: the file ends before {}", self.section, what()));
        }
        let first = self.size("")?;
        self.take((needed - self.size_t as u64) as usize, "")?;
        Ok(first)
    }
    fn end(&mut self, end: &str) -> Result<(), String> {
        let rest = self.rest.trim_ascii_start();
        if rest.starts_with(end.as_bytes()) {
            Ok(())
        } else {
            Err(format!(
                "{}: expected {end} after the last block (the counts in the blocks do not match the data)",
                self.section
            ))
        }
    }
    fn mark(&self) -> usize {
        self.rest.len()
    }
    fn error_at(&self, _mark: usize, message: String) -> PreError {
        PreError::Parse(format!("{}: {message}", self.section))
    }
    fn remaining_hint(&self) -> usize {
        self.rest.len() / self.size_t
    }
    fn room(&self, _min_item_bytes: u64) -> u64 {
        self.rest.len() as u64 / self.size_t as u64
    }
}

type MshFile = mshio::MshFile<u64, i32, f64>;

/// Runs `mshio`, turning its errors (and panics) into a message.
fn parse_with_mshio(bytes: &[u8], binary: bool) -> Result<MshFile, String> {
    let result = catch_unwind(AssertUnwindSafe(|| {
        mshio::parse_msh_bytes(bytes).map_err(|e| describe_mshio_error(&e, bytes, binary))
    }));
    match result {
        Ok(r) => r,
        Err(panic) => {
            let msg = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            Err(format!("the MSH parser failed on corrupt input ({msg})"))
        }
    }
}

/// A one-paragraph description of an `mshio` error: what, where, in which section.
/// (`mshio`'s own `Display` appends a hex dump of the rest of the file.)
fn describe_mshio_error(e: &mshio::MshParserError<&[u8]>, bytes: &[u8], binary: bool) -> String {
    let trace: Vec<&(&[u8], MshParserErrorKind)> = e.filter_msh_errors().collect();
    let Some((at, kind)) = trace.first() else {
        return "unknown parse error".into();
    };
    let offset = bytes.len().saturating_sub(at.len());
    let mut msg = format!("{kind} (at byte {offset}");
    if !binary {
        let line = bytes[..offset].iter().filter(|&&b| b == b'\n').count() + 1;
        msg.push_str(&format!(", line {line}"));
    }
    let contexts: Vec<String> = trace[1..]
        .iter()
        .rev()
        .map(|(_, k)| k.context().map_or_else(|| k.to_string(), str::to_string))
        .collect();
    if !contexts.is_empty() {
        msg.push_str(", in ");
        msg.push_str(&contexts.join(" > "));
    }
    msg.push(')');
    msg
}

/// Gmsh's name for element types fem does not support, for error messages.
fn gmsh_type_name(t: i32) -> String {
    let name = match t {
        6 => "prism6",
        7 => "pyramid5",
        9 => "tri6",
        10 => "quad9",
        12 => "hex27",
        13 => "prism18",
        14 => "pyramid14",
        16 => "quad8",
        17 => "hex20",
        18 => "prism15",
        19 => "pyramid13",
        21 => "tri10",
        26 => "line4",
        29 => "tet20",
        _ => return "a type fem does not know".into(),
    };
    name.to_string()
}

fn build_mesh(
    msh: &MshFile,
    node_tags: &[Vec<u64>],
    names: &HashMap<(usize, i32), String>,
    path: &Path,
) -> Result<Mesh, MeshError> {
    let parse_err = |message: String| MeshError::Parse {
        path: path.to_path_buf(),
        message,
    };

    // Nodes: coordinates from mshio, tags from our own scan.
    let nodes = msh
        .data
        .nodes
        .as_ref()
        .ok_or_else(|| parse_err("no $Nodes section".into()))?;
    if nodes.node_blocks.len() != node_tags.len()
        || nodes
            .node_blocks
            .iter()
            .zip(node_tags)
            .any(|(b, t)| b.nodes.len() != t.len())
    {
        return Err(parse_err("inconsistent $Nodes section".into()));
    }
    let mut points = Vec::with_capacity(node_tags.iter().map(Vec::len).sum());
    let mut index_of_tag: HashMap<u64, usize> = HashMap::with_capacity(points.capacity());
    for (block, tags) in nodes.node_blocks.iter().zip(node_tags) {
        for (node, &tag) in block.nodes.iter().zip(tags) {
            if index_of_tag.insert(tag, points.len()).is_some() {
                return Err(parse_err(format!("node tag {tag} appears twice")));
            }
            points.push([node.x, node.y, node.z]);
        }
    }

    // Element types: refuse unsupported ones, naming the first.
    let empty = Vec::new();
    let element_blocks = msh
        .data
        .elements
        .as_ref()
        .map_or(&empty, |e| &e.element_blocks);
    if element_blocks.iter().all(|eb| eb.elements.is_empty()) {
        return Err(parse_err("the file contains no elements".into()));
    }
    let mut unsupported: BTreeMap<i32, usize> = BTreeMap::new();
    for eb in element_blocks {
        let t = eb.element_type as i32;
        if CellKind::from_gmsh_type(t).is_none() {
            *unsupported.entry(t).or_default() += eb.elements.len();
        }
    }
    if let Some((&gmsh_type, &count)) = unsupported.iter().next() {
        return Err(MeshError::UnsupportedCell {
            path: path.to_path_buf(),
            gmsh_type,
            gmsh_name: gmsh_type_name(gmsh_type),
            count,
        });
    }

    // Cells: one block per kind; remember which cells each entity owns.
    let mut blocks: Vec<CellBlock> = Vec::new();
    let mut entity_cells: HashMap<(usize, i32), Vec<(usize, usize)>> = HashMap::new();
    for eb in element_blocks {
        let kind = CellKind::from_gmsh_type(eb.element_type as i32).expect("checked above");
        let b = match blocks.iter().position(|blk| blk.kind == kind) {
            Some(b) => b,
            None => {
                blocks.push(CellBlock::new(kind));
                blocks.len() - 1
            }
        };
        let dim = usize::try_from(eb.entity_dim)
            .map_err(|_| parse_err(format!("element block with dimension {}", eb.entity_dim)))?;
        let owned = entity_cells.entry((dim, eb.entity_tag)).or_default();
        for el in &eb.elements {
            let mut conn = Vec::with_capacity(el.nodes.len());
            for tag in &el.nodes {
                let &i = index_of_tag.get(tag).ok_or_else(|| {
                    parse_err(format!(
                        "element {} refers to node tag {tag}, which is not in $Nodes",
                        el.element_tag
                    ))
                })?;
                conn.push(i);
            }
            owned.push((b, blocks[b].push(&conn)));
        }
    }

    // Physical groups: (dim, tag) -> cells of all entities carrying the tag.
    let mut group_cells: BTreeMap<(usize, i32), Vec<(usize, usize)>> = BTreeMap::new();
    for &key in names.keys() {
        group_cells.entry(key).or_default();
    }
    if let Some(ent) = &msh.data.entities {
        let entities = ent
            .points
            .iter()
            .map(|e| (0, e.tag, &e.physical_tags))
            .chain(ent.curves.iter().map(|e| (1, e.tag, &e.physical_tags)))
            .chain(ent.surfaces.iter().map(|e| (2, e.tag, &e.physical_tags)))
            .chain(ent.volumes.iter().map(|e| (3, e.tag, &e.physical_tags)));
        for (dim, tag, physical_tags) in entities {
            let cells = entity_cells.get(&(dim, tag));
            for &p in physical_tags {
                let entry = group_cells.entry((dim, p.saturating_abs())).or_default();
                if let Some(cells) = cells {
                    entry.extend_from_slice(cells);
                }
            }
        }
    }
    let groups = group_cells
        .into_iter()
        .map(|((dim, tag), mut cells)| {
            cells.sort_unstable();
            cells.dedup();
            let name = names
                .get(&(dim, tag))
                .cloned()
                .unwrap_or_else(|| format!("physical_{dim}_{tag}"));
            PhysicalGroup::from_cells(name, dim, tag, cells, &blocks)
        })
        .collect();

    Ok(Mesh {
        points,
        blocks,
        groups,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<Mesh, MeshError> {
        read_msh_bytes(text.as_bytes(), Path::new("test.msh"))
    }

    #[test]
    fn version_is_named() {
        let e = read("$MeshFormat\n2.2 0 8\n$EndMeshFormat\n").unwrap_err();
        assert!(matches!(e, MeshError::UnsupportedVersion { ref found, .. } if found == "2.2"));
        assert!(e.to_string().contains("test.msh is MSH 2.2"), "{e}");
        let e = read("$MeshFormat\n4 0 8\n$EndMeshFormat\n").unwrap_err();
        assert!(matches!(e, MeshError::UnsupportedVersion { .. }));
    }

    #[test]
    fn not_a_mesh() {
        for text in [
            "",
            "   \n",
            "hello\n",
            "$MeshFormat\n",
            "$MeshFormat\n4.1 7 8\n",
        ] {
            assert!(
                matches!(read(text), Err(MeshError::Parse { .. })),
                "{text:?}"
            );
        }
    }

    #[test]
    fn find_section_requires_whole_line() {
        let b = b"$MeshFormat\nx $Nodes\n$NodesX\n$Nodes\r\nrest";
        let start = find_section(b, b"$Nodes").unwrap();
        assert_eq!(&b[start..], b"rest");
    }

    #[test]
    fn physical_names_with_spaces() {
        let names = read_physical_names(b"2\n1 5 \"left end\"\n3 2 \"solid\"\n$EndPhysicalNames\n")
            .unwrap();
        assert_eq!(names[&(1, 5)], "left end");
        assert_eq!(names[&(3, 2)], "solid");
        assert!(read_physical_names(b"2\n1 5 \"a\"\n$EndPhysicalNames\n").is_err());
    }

    #[test]
    fn zero_nodes_is_an_error_not_a_panic() {
        let text = "$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Nodes\n0 0 1 1\n$EndNodes\n";
        assert!(matches!(read(text), Err(MeshError::Parse { .. })));
    }

    /// mshio computes `num_elements - 1` unchecked: with 0 elements but a
    /// nonzero minimum tag it overflows (a panic in debug builds).
    #[test]
    fn mshio_panic_becomes_parse_error() {
        let text = "$MeshFormat\n4.1 0 8\n$EndMeshFormat\n\
                    $Nodes\n1 1 1 1\n0 1 0 1\n1\n0 0 0\n$EndNodes\n\
                    $Elements\n1 0 1 1\n0 1 15 0\n$EndElements\n";
        assert!(matches!(read(text), Err(MeshError::Parse { .. })));
    }
}
