//! The small subset of HDF5 (File Format Specification version 3.0) that the VTKHDF series
//! writes: a version-2 superblock, version-2 object headers with continuation chunks, groups
//! whose links are stored in their header ("compact" new-style groups), contiguous datasets and
//! attributes of 64-bit integers, IEEE floats, bytes and fixed-length ASCII strings.
//!
//! Written here rather than through a crate: the pure-Rust `hdf5-pure` (0.47) appends to
//! rank-1 datasets only (a point field is `n × 3`), and the C library (`hdf5-metno`) neither
//! leaves a readable file when the process is killed between two flushes nor lets the byte
//! layout be chosen, which is what makes a resumed run's file bitwise that of an uninterrupted
//! run here (see [`crate::vtkhdf`]). Every structure is encoded by one function below, with
//! the section of the specification it follows; the files are read back in the tests by the
//! independent `hdf5-pure` reader and in CI by VTK's own reader (libhdf5).

/// The undefined address (all bits set), HDF5's `UNDEF`.
pub(crate) const UNDEF: u64 = u64::MAX;

/// Bob Jenkins' lookup3 `hashlittle` with initial value 0: the checksum of HDF5 metadata
/// (specification, "Appendix C: Jenkins' lookup3 Hash Function for Checksums").
pub(crate) fn lookup3(data: &[u8]) -> u32 {
    fn rot(x: u32, k: u32) -> u32 {
        x.rotate_left(k)
    }
    let mut a: u32 = 0xdead_beef_u32.wrapping_add(data.len() as u32);
    let mut b = a;
    let mut c = a;
    let word = |k: &[u8]| u32::from_le_bytes([k[0], k[1], k[2], k[3]]);
    let mut k = data;
    while k.len() > 12 {
        a = a.wrapping_add(word(&k[0..4]));
        b = b.wrapping_add(word(&k[4..8]));
        c = c.wrapping_add(word(&k[8..12]));
        // mix(a, b, c)
        a = a.wrapping_sub(c);
        a ^= rot(c, 4);
        c = c.wrapping_add(b);
        b = b.wrapping_sub(a);
        b ^= rot(a, 6);
        a = a.wrapping_add(c);
        c = c.wrapping_sub(b);
        c ^= rot(b, 8);
        b = b.wrapping_add(a);
        a = a.wrapping_sub(c);
        a ^= rot(c, 16);
        c = c.wrapping_add(b);
        b = b.wrapping_sub(a);
        b ^= rot(a, 19);
        a = a.wrapping_add(c);
        c = c.wrapping_sub(b);
        c ^= rot(b, 4);
        b = b.wrapping_add(a);
        k = &k[12..];
    }
    if k.is_empty() {
        return c;
    }
    // The last 1..=12 bytes, zero-padded, little endian.
    let mut tail = [0u8; 12];
    tail[..k.len()].copy_from_slice(k);
    a = a.wrapping_add(word(&tail[0..4]));
    b = b.wrapping_add(word(&tail[4..8]));
    c = c.wrapping_add(word(&tail[8..12]));
    // final(a, b, c)
    c ^= b;
    c = c.wrapping_sub(rot(b, 14));
    a ^= c;
    a = a.wrapping_sub(rot(c, 11));
    b ^= a;
    b = b.wrapping_sub(rot(a, 25));
    c ^= b;
    c = c.wrapping_sub(rot(b, 16));
    a ^= c;
    a = a.wrapping_sub(rot(c, 4));
    b ^= a;
    b = b.wrapping_sub(rot(a, 14));
    c ^= b;
    c = c.wrapping_sub(rot(b, 24));
    c
}

/// An element type (specification IV.A.2.d, "Datatype Message").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Dtype {
    /// IEEE 754 binary64, little endian.
    F64,
    /// IEEE 754 binary32, little endian.
    F32,
    /// Two's complement 64-bit signed integer, little endian.
    I64,
    /// Unsigned byte.
    U8,
    /// Fixed-length ASCII string of this many bytes, null padded.
    Str(usize),
}

impl Dtype {
    /// Bytes per element.
    pub(crate) fn size(self) -> usize {
        match self {
            Dtype::F64 | Dtype::I64 => 8,
            Dtype::F32 => 4,
            Dtype::U8 => 1,
            Dtype::Str(n) => n,
        }
    }

    /// The message body: class and version, class bit fields, size, properties.
    fn encode(self) -> Vec<u8> {
        let mut out = Vec::with_capacity(20);
        let version = 1u8 << 4;
        match self {
            Dtype::I64 | Dtype::U8 => {
                // Fixed-point (class 0): little endian, zero padding, bit 3 = signed.
                let signed = if self == Dtype::I64 { 0x08 } else { 0x00 };
                out.extend([version, signed, 0, 0]);
                out.extend((self.size() as u32).to_le_bytes());
                out.extend(0u16.to_le_bytes()); // bit offset
                out.extend((8 * self.size() as u16).to_le_bytes()); // bit precision
            }
            Dtype::F64 | Dtype::F32 => {
                // Floating point (class 1): little endian, implied leading mantissa bit
                // (normalization 2 in bits 4-5), sign bit position in the second byte.
                let (bits, exp_loc, exp_size, mant_size, bias): (u16, u8, u8, u8, u32) =
                    if self == Dtype::F64 {
                        (64, 52, 11, 52, 1023)
                    } else {
                        (32, 23, 8, 23, 127)
                    };
                out.extend([version | 1, 0x20, (bits - 1) as u8, 0]);
                out.extend((self.size() as u32).to_le_bytes());
                out.extend(0u16.to_le_bytes()); // bit offset
                out.extend(bits.to_le_bytes()); // precision
                out.extend([exp_loc, exp_size, 0, mant_size]);
                out.extend(bias.to_le_bytes());
            }
            Dtype::Str(n) => {
                // String (class 3): padding 1 (null pad), character set 0 (ASCII).
                out.extend([version | 3, 0x01, 0, 0]);
                out.extend((n as u32).to_le_bytes());
            }
        }
        out
    }
}

/// A dataspace message body (IV.A.2.b, version 2): scalar for no dimensions, else simple,
/// with maximum dimensions when `max` is given.
fn dataspace(dims: &[u64], max: Option<&[u64]>) -> Vec<u8> {
    let mut out = Vec::with_capacity(4 + 16 * dims.len());
    let kind = if dims.is_empty() { 0 } else { 1 };
    out.extend([2, dims.len() as u8, u8::from(max.is_some()), kind]);
    for d in dims {
        out.extend(d.to_le_bytes());
    }
    if let Some(max) = max {
        for d in max {
            out.extend(d.to_le_bytes());
        }
    }
    out
}

/// A header message: its type and body.
#[derive(Clone, Debug)]
pub(crate) struct Message {
    kind: u8,
    body: Vec<u8>,
}

impl Message {
    /// Dataspace (type 0x01).
    pub(crate) fn dataspace(dims: &[u64], max: Option<&[u64]>) -> Self {
        Self {
            kind: 0x01,
            body: dataspace(dims, max),
        }
    }

    /// Link info (type 0x02, IV.A.2.c): no creation order, links stored in the header.
    pub(crate) fn link_info() -> Self {
        let mut body = vec![0, 0];
        body.extend(UNDEF.to_le_bytes()); // fractal heap
        body.extend(UNDEF.to_le_bytes()); // name index
        Self { kind: 0x02, body }
    }

    /// Datatype (type 0x03).
    pub(crate) fn datatype(dtype: Dtype) -> Self {
        Self {
            kind: 0x03,
            body: dtype.encode(),
        }
    }

    /// Fill value (type 0x05, IV.A.2.f, version 3): storage allocated early, no fill value
    /// written (the writer fills every slot it publishes).
    pub(crate) fn fill_value() -> Self {
        Self {
            kind: 0x05,
            body: vec![3, 0x01 | (1 << 2)],
        }
    }

    /// A hard link named `name` to the object header at `address` (type 0x06, IV.A.2.g).
    pub(crate) fn link(name: &str, address: u64) -> Self {
        let mut body = vec![1, 0, name.len() as u8];
        body.extend(name.as_bytes());
        body.extend(address.to_le_bytes());
        Self { kind: 0x06, body }
    }

    /// Contiguous data layout (type 0x08, IV.A.2.i, version 3).
    pub(crate) fn contiguous(address: u64, size: u64) -> Self {
        let mut body = vec![3, 1];
        body.extend(address.to_le_bytes());
        body.extend(size.to_le_bytes());
        Self { kind: 0x08, body }
    }

    /// Fill value (type 0x05, version 3) of a chunked dataset: storage allocated
    /// incrementally (a chunk when it is written), no fill value written.
    pub(crate) fn fill_value_incremental() -> Self {
        Self {
            kind: 0x05,
            body: vec![3, 0x03 | (1 << 2)],
        }
    }

    /// Filter pipeline (type 0x0B, IV.A.2.l, version 2): byte shuffle (id 2, its client
    /// value the element size) then deflate (id 1, the level), both optional (flag 1), as
    /// `H5Pset_shuffle` and `H5Pset_deflate` record them.
    pub(crate) fn shuffle_deflate(element_size: usize, level: u32) -> Self {
        let mut body = vec![2, 2];
        for (id, value) in [(2u16, element_size as u32), (1u16, level)] {
            body.extend(id.to_le_bytes());
            body.extend(1u16.to_le_bytes()); // optional
            body.extend(1u16.to_le_bytes()); // one client value
            body.extend(value.to_le_bytes());
        }
        Self { kind: 0x0B, body }
    }

    /// Chunked data layout (type 0x08, IV.A.2.i, version 4) indexed by a fixed array
    /// (index type 3) whose header is at `index`: `chunk` the chunk's dimensions, then the
    /// element size as the last one; `page_bits` the fixed array's data block page bits.
    pub(crate) fn chunked_fixed_array(
        chunk: &[u64],
        element_size: usize,
        page_bits: u8,
        index: u64,
    ) -> Self {
        let mut dims = chunk.to_vec();
        dims.push(element_size as u64);
        let largest = dims.iter().copied().max().unwrap_or(1);
        let width = (((64 - largest.leading_zeros()) as usize).div_ceil(8)).max(1);
        let mut body = vec![4, 2, 0, dims.len() as u8, width as u8];
        for d in &dims {
            body.extend(&d.to_le_bytes()[..width]);
        }
        body.push(3);
        body.push(page_bits);
        body.extend(index.to_le_bytes());
        Self { kind: 0x08, body }
    }

    /// Group info (type 0x0A, IV.A.2.k): defaults.
    pub(crate) fn group_info() -> Self {
        Self {
            kind: 0x0A,
            body: vec![0, 0],
        }
    }

    /// An attribute (type 0x0C, IV.A.2.m, version 3): `data` holds the little-endian values
    /// of a scalar (no `dims`) or a simple dataspace.
    pub(crate) fn attribute(name: &str, dtype: Dtype, dims: &[u64], data: &[u8]) -> Self {
        let dt = dtype.encode();
        let ds = dataspace(dims, None);
        let mut body = vec![3, 0];
        body.extend(((name.len() + 1) as u16).to_le_bytes());
        body.extend((dt.len() as u16).to_le_bytes());
        body.extend((ds.len() as u16).to_le_bytes());
        body.push(0); // ASCII name
        body.extend(name.as_bytes());
        body.push(0);
        body.extend(dt);
        body.extend(ds);
        body.extend(data);
        Self { kind: 0x0C, body }
    }

    /// Object header continuation (type 0x10): the chunk at `address`, `length` bytes.
    pub(crate) fn continuation(address: u64, length: u64) -> Self {
        let mut body = Vec::with_capacity(16);
        body.extend(address.to_le_bytes());
        body.extend(length.to_le_bytes());
        Self { kind: 0x10, body }
    }

    /// Bytes of the body (the position of the data in an attribute is found from it).
    pub(crate) fn body(&self) -> &[u8] {
        &self.body
    }
}

/// Appends the messages (4-byte prefix: type, size, flags) to `out`.
fn push_messages(messages: &[Message], out: &mut Vec<u8>) {
    for m in messages {
        out.push(m.kind);
        out.extend((m.body.len() as u16).to_le_bytes());
        out.push(0);
        out.extend(&m.body);
    }
}

/// Bytes a message takes in a header, prefix included.
pub(crate) fn message_len(m: &Message) -> usize {
    4 + m.body.len()
}

/// A version-2 object header (IV.A.1.b): "OHDR", version 2, flags 2 (a 4-byte size of chunk
/// 0), the size, the messages, the checksum.
pub(crate) fn object_header(messages: &[Message]) -> Vec<u8> {
    let size: usize = messages.iter().map(message_len).sum();
    let mut out = Vec::with_capacity(14 + size);
    out.extend(b"OHDR");
    out.extend([2, 0x02]);
    out.extend((size as u32).to_le_bytes());
    push_messages(messages, &mut out);
    let sum = lookup3(&out);
    out.extend(sum.to_le_bytes());
    out
}

/// Bytes before the first message of an [`object_header`].
pub(crate) const OBJECT_HEADER_PREFIX: usize = 10;

/// A continuation chunk of a version-2 object header: "OCHK", the messages, the checksum.
pub(crate) fn continuation_chunk(messages: &[Message]) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend(b"OCHK");
    push_messages(messages, &mut out);
    let sum = lookup3(&out);
    out.extend(sum.to_le_bytes());
    out
}

/// One entry of a fixed array of filtered chunks: the chunk's address, its stored size and
/// the mask of the filters it skipped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ChunkEntry {
    pub address: u64,
    pub size: u64,
    pub mask: u32,
}

/// Bytes of the "chunk size" of a fixed-array entry for chunks of `raw` bytes before the
/// filters: `1 + (⌊log2 raw⌋ + 8) / 8`, at most 8 (what libhdf5 derives from the chunk's
/// dimensions; it is not read from the file).
pub(crate) fn chunk_size_width(raw: u64) -> usize {
    let log2 = 63 - raw.max(1).leading_zeros() as usize;
    (1 + (log2 + 8) / 8).min(8)
}

/// Bytes of a [`fixed_array`] of `n` entries for chunks of `raw` bytes.
pub(crate) fn fixed_array_len(n: u64, raw: u64) -> u64 {
    let entry = (8 + chunk_size_width(raw) + 4) as u64;
    FIXED_ARRAY_HEADER_LEN + 18 + n * entry
}

/// Bytes of a fixed array's header.
const FIXED_ARRAY_HEADER_LEN: u64 = 28;

/// A fixed array of filtered chunks (III.I, "Fixed Array Index", class 1) at `address`:
/// the header ("FAHD") followed by its data block ("FADB", not paged: `page_bits` is at least
/// ⌈log2 n⌉) holding `n` entries, the first of them `entries`, the others unallocated.
pub(crate) fn fixed_array(
    address: u64,
    n: u64,
    raw: u64,
    page_bits: u8,
    entries: &[ChunkEntry],
) -> Vec<u8> {
    let width = chunk_size_width(raw);
    let entry = 8 + width + 4;
    let mut out = Vec::with_capacity(fixed_array_len(n, raw) as usize);
    out.extend(b"FAHD");
    out.extend([0, 1, entry as u8, page_bits]);
    out.extend(n.to_le_bytes());
    out.extend((address + FIXED_ARRAY_HEADER_LEN).to_le_bytes());
    let sum = lookup3(&out);
    out.extend(sum.to_le_bytes());
    let block = out.len();
    out.extend(b"FADB");
    out.extend([0, 1]);
    out.extend(address.to_le_bytes());
    for k in 0..n as usize {
        let e = entries.get(k).copied().unwrap_or(ChunkEntry {
            address: UNDEF,
            size: 0,
            mask: 0,
        });
        out.extend(e.address.to_le_bytes());
        out.extend(&e.size.to_le_bytes()[..width]);
        out.extend(e.mask.to_le_bytes());
    }
    let sum = lookup3(&out[block..]);
    out.extend(sum.to_le_bytes());
    out
}

/// The entries of a [`fixed_array`] (its bytes), checked; `None` if they are not one.
pub(crate) fn read_fixed_array(bytes: &[u8], raw: u64) -> Option<Vec<ChunkEntry>> {
    let h = FIXED_ARRAY_HEADER_LEN as usize;
    if bytes.len() < h + 18 || &bytes[..4] != b"FAHD" || &bytes[h..h + 4] != b"FADB" {
        return None;
    }
    if lookup3(&bytes[..h - 4]).to_le_bytes() != bytes[h - 4..h] {
        return None;
    }
    let n = u64::from_le_bytes(bytes[8..16].try_into().ok()?);
    let width = chunk_size_width(raw);
    let entry = 8 + width + 4;
    let end = h + 14 + (n as usize).checked_mul(entry)?;
    if bytes.len() < end + 4 || lookup3(&bytes[h..end]).to_le_bytes() != bytes[end..end + 4] {
        return None;
    }
    let mut out = Vec::with_capacity(n as usize);
    for e in bytes[h + 14..end].chunks_exact(entry) {
        let mut size = [0u8; 8];
        size[..width].copy_from_slice(&e[8..8 + width]);
        out.push(ChunkEntry {
            address: u64::from_le_bytes(e[..8].try_into().ok()?),
            size: u64::from_le_bytes(size),
            mask: u32::from_le_bytes(e[8 + width..].try_into().ok()?),
        });
    }
    Some(out)
}

/// A version-2 superblock (II.A, 48 bytes): offsets and lengths of 8 bytes, no extension.
pub(crate) fn superblock(end_of_file: u64, root: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(SUPERBLOCK_LEN);
    out.extend(b"\x89HDF\r\n\x1a\n");
    out.extend([2, 8, 8, 0]);
    out.extend(0u64.to_le_bytes()); // base address
    out.extend(UNDEF.to_le_bytes()); // superblock extension
    out.extend(end_of_file.to_le_bytes());
    out.extend(root.to_le_bytes());
    let sum = lookup3(&out);
    out.extend(sum.to_le_bytes());
    out
}

/// Bytes of the [`superblock`].
pub(crate) const SUPERBLOCK_LEN: usize = 48;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookup3_matches_the_reference_values() {
        // From lookup3.c's driver5: hashlittle("", 0) = 0xdeadbeef, and
        // hashlittle("Four score and seven years ago", 0) = 0x17770551.
        assert_eq!(lookup3(b""), 0xdead_beef);
        assert_eq!(lookup3(b"Four score and seven years ago"), 0x1777_0551);
    }

    #[test]
    fn superblock_is_48_bytes_with_its_checksum() {
        let s = superblock(4096, 48);
        assert_eq!(s.len(), SUPERBLOCK_LEN);
        assert_eq!(&s[..8], b"\x89HDF\r\n\x1a\n");
        assert_eq!(lookup3(&s[..44]).to_le_bytes(), s[44..48]);
    }
}
