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

/// Reads a Gmsh MSH 4.1 file (ASCII or binary) and [validates](Mesh::validate) it.
///
/// Every element becomes a cell; elements of the same kind are merged into
/// one [`CellBlock`] per kind, in order of first appearance. Each physical
/// group collects the elements of the geometric entities carrying its tag;
/// unnamed groups are called `"physical_{dim}_{tag}"`. Groups are sorted by
/// `(dim, tag)`.
pub fn read_msh(path: &Path) -> Result<Mesh, MeshError> {
    let bytes = std::fs::read(path).map_err(|source| MeshError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    read_msh_bytes(&bytes, path)
}

/// Like [`read_msh`], for a file already in memory; `path` is only used in
/// error messages.
pub fn read_msh_bytes(bytes: &[u8], path: &Path) -> Result<Mesh, MeshError> {
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
    let names = match find_section(bytes, b"$PhysicalNames") {
        Some(start) => read_physical_names(&bytes[start..]).map_err(parse_err)?,
        None => HashMap::new(),
    };
    let node_tags = match find_section(bytes, b"$Nodes") {
        Some(start) => read_node_tags(&bytes[start..], &header).map_err(|e| e.into_error(path))?,
        None => return Err(parse_err("no $Nodes section".into())),
    };

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
}

impl PreError {
    fn into_error(self, path: &Path) -> MeshError {
        let path = path.to_path_buf();
        match self {
            PreError::Parse(message) => MeshError::Parse { path, message },
            PreError::Version(found) => MeshError::UnsupportedVersion { path, found },
            PreError::Parametric => MeshError::ParametricNodes { path },
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
        ("0", Some(n)) => (None, n),
        ("1", Some(n @ (4 | 8))) => {
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

/// Reads the node tags of every node block of the `$Nodes` section body
/// (skipping the coordinates). Refuses parametric node blocks.
fn read_node_tags(section: &[u8], header: &Header) -> Result<Vec<Vec<u64>>, PreError> {
    let mut r: Box<dyn NumReader> = match header.binary {
        None => Box::new(AsciiReader { rest: section }),
        Some(le) => Box::new(BinaryReader {
            rest: section,
            little_endian: le,
            size_t: header.size_t,
        }),
    };
    let n_blocks = r.size("number of node blocks")?;
    let n_nodes = r.size("number of nodes")?;
    let _min_tag = r.size("minimum node tag")?;
    let _max_tag = r.size("maximum node tag")?;
    if n_nodes == 0 {
        return Err(PreError::Parse("the file contains no nodes".into()));
    }
    let mut blocks = Vec::new();
    let mut total = 0u64;
    for b in 0..n_blocks {
        let what = |s: &str| format!("{s} of node block {} of {n_blocks}", b + 1);
        r.int(&what("entity dimension"))?;
        r.int(&what("entity tag"))?;
        let parametric = r.int(&what("parametric flag"))?;
        if parametric != 0 {
            return Err(PreError::Parametric);
        }
        let n = r.size(&what("node count"))?;
        total += n;
        if total > n_nodes {
            return Err(PreError::Parse(format!(
                "node blocks hold more nodes than the {n_nodes} announced in $Nodes"
            )));
        }
        // Cap the preallocation by what the file can hold.
        let mut tags = Vec::with_capacity((n as usize).min(r.remaining_hint()));
        for _ in 0..n {
            tags.push(r.size(&what("node tag"))?);
        }
        r.skip_floats(3 * n, &what("node coordinates"))?;
        blocks.push(tags);
    }
    if total != n_nodes {
        return Err(PreError::Parse(format!(
            "$Nodes announces {n_nodes} nodes but its blocks hold {total}"
        )));
    }
    Ok(blocks)
}

/// Minimal number reader over an ASCII or binary section body.
trait NumReader {
    fn size(&mut self, what: &str) -> Result<u64, String>;
    fn int(&mut self, what: &str) -> Result<i64, String>;
    fn skip_floats(&mut self, n: u64, what: &str) -> Result<(), String>;
    fn remaining_hint(&self) -> usize;
}

struct AsciiReader<'a> {
    rest: &'a [u8],
}

impl AsciiReader<'_> {
    fn token(&mut self, what: &str) -> Result<&str, String> {
        let start = self
            .rest
            .iter()
            .position(|b| !b.is_ascii_whitespace())
            .ok_or_else(|| format!("$Nodes: file ends before the {what}"))?;
        let rest = &self.rest[start..];
        let len = rest
            .iter()
            .position(|b| b.is_ascii_whitespace())
            .unwrap_or(rest.len());
        let (tok, rest) = rest.split_at(len);
        self.rest = rest;
        let tok = std::str::from_utf8(tok).map_err(|_| format!("$Nodes: invalid {what}"))?;
        if tok.starts_with('$') {
            return Err(format!("$Nodes: found {tok} where the {what} was expected"));
        }
        Ok(tok)
    }
}

impl NumReader for AsciiReader<'_> {
    fn size(&mut self, what: &str) -> Result<u64, String> {
        let t = self.token(what)?;
        t.parse()
            .map_err(|_| format!("$Nodes: expected the {what}, found {t:?}"))
    }
    fn int(&mut self, what: &str) -> Result<i64, String> {
        let t = self.token(what)?;
        t.parse()
            .map_err(|_| format!("$Nodes: expected the {what}, found {t:?}"))
    }
    fn skip_floats(&mut self, n: u64, what: &str) -> Result<(), String> {
        for _ in 0..n {
            let t = self.token(what)?;
            t.parse::<f64>()
                .map_err(|_| format!("$Nodes: expected a number in the {what}, found {t:?}"))?;
        }
        Ok(())
    }
    fn remaining_hint(&self) -> usize {
        self.rest.len() / 2
    }
}

struct BinaryReader<'a> {
    rest: &'a [u8],
    little_endian: bool,
    size_t: usize,
}

impl BinaryReader<'_> {
    fn take(&mut self, n: usize, what: &str) -> Result<&[u8], String> {
        if self.rest.len() < n {
            return Err(format!("$Nodes: file ends before the {what}"));
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
            .ok_or_else(|| format!("$Nodes: impossible size of the {what}"))?;
        self.take(bytes, what).map(|_| ())
    }
    fn remaining_hint(&self) -> usize {
        self.rest.len() / self.size_t
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
        _ => return format!("Gmsh element type {t}"),
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
