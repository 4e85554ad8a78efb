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
